"""From stack config to component arguments, and from argument names back to config keys.

The library's components take narrow, typed arguments (:mod:`gpu_fungibility`)
and report problems in their own argument names (``autoscaling.max_nodes``).
This module is the one place that knows both sides: each builder returns the
arguments of one component *and* a :class:`KeyPaths` that turns the
component's argument paths back into the config key paths a user edits
(``nodePools.a100.autoscaling.max``).

:func:`argument_issues` runs every component's own check over the arguments
the stack will pass, before anything is registered, so a stack reports every
problem at once with its key path. Values that only exist once a resource is
created (a cluster's name, a role's ARN) are stood in for by
:data:`PENDING`: the checks never look inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gpu_fungibility
from gpu_fungibility import clouds, devices, dra_wiring
from gpu_fungibility.base import LibraryComponent
from gpu_fungibility.node_selection import NodeTaint, unique_taints

if TYPE_CHECKING:
    from stacks.config import HelmChart, NodePool, SharedClaim, StackConfig, Workload

Issues = list[tuple[str, str]]

#: Stands in for a value another resource provides, in up-front checks.
PENDING = "(known after creation)"
#: Key path of an argument built from the pools' own (the taints on their nodes): its problems are
#: reported by the pool components' checks, at the pool's key, not again under a meaningless index.
FROM_POOLS = None


def _component(name: str) -> type[LibraryComponent]:
    """A library component, imported on first use: a GKE stack never imports the AWS SDK, nor an EKS stack GCP's."""
    return getattr(gpu_fungibility, name)


def _camel(segment: str) -> str:
    head, *rest = segment.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _camel_path(path: str) -> str:
    out, word = "", ""
    for char in path:
        if char in ".[":
            out += _camel(word) + char
            word = ""
        else:
            word += char
    return out + _camel(word)


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
        return f"{self.base}.{_camel_path(arg_path)}"


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


def _chart_args(chart: HelmChart) -> dict[str, Any]:
    args: dict[str, Any] = {"chart": chart.chart, "version": chart.version, "namespace": chart.namespace,
                            "values": dict(chart.values)}
    if chart.repo:
        args["repository"] = chart.repo
    return args


CHART_PATHS = {"repository": "repo", "values": "values"}  # values keys are the chart's own: kept as written

# ---- pools ---------------------------------------------------------------------------------

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


def system_node_group() -> str:
    """The pool name the EKS cluster's own CPU node group takes."""
    from gpu_fungibility.eks_cluster import SYSTEM_NODE_GROUP

    return SYSTEM_NODE_GROUP


def node_group_name(cluster_name: str, pool_name: str) -> str:
    """The EKS node group of a pool (and the component's resource name)."""
    return f"{cluster_name}-{pool_name}"


def _pool_common(cfg: StackConfig, pool_name: str) -> dict[str, Any]:
    pool: NodePool = cfg.node_pools[pool_name]
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
    if compute_class:
        args["compute_class"] = compute_class
    return args


def gke_pool(cfg: StackConfig, pool_name: str, *, cluster: Any = PENDING, service_account: Any = PENDING,
             project: Any = None) -> Planned:
    pool = cfg.node_pools[pool_name]
    args = {
        **_pool_common(cfg, pool_name),
        "cluster": cluster,
        "location": cfg.cluster.location,
        "zones": list(pool.zones or cfg.cluster.zones),
        "machine_type": pool.machine_type or "",
        "service_account": service_account,
        "resource_labels": dict(cfg.cluster.labels),
    }
    if project is not None:
        args["project"] = project
    component = _component("GkeTpuNodePool") if pool.family == "tpu" else _component("GkeGpuNodePool")
    return Planned(component, pool_name, args, KeyPaths(f"nodePools.{pool_name}", POOL_PATHS))


def eks_node_group(cfg: StackConfig, pool_name: str, *, cluster_name: Any = PENDING, node_role_arn: Any = PENDING,
                   subnet_ids: Any = (PENDING,)) -> Planned:
    pool = cfg.node_pools[pool_name]
    group = node_group_name(cfg.cluster.name, pool_name)
    common = _pool_common(cfg, pool_name)
    common.pop("compute_class", None)  # EKS orders node groups through the autoscaler, not node labels
    args = {
        **common,
        "cluster_name": cluster_name,
        "node_role_arn": node_role_arn,
        "subnet_ids": list(subnet_ids) if isinstance(subnet_ids, tuple) else subnet_ids,
        "instance_types": list(pool.instance_types or []),
        "node_group_name": group,
        "tags": {**cfg.cluster.labels, "gpu-fungibility/pool": pool_name},
    }
    return Planned(_component("EksGpuNodeGroup"), group, args, KeyPaths(f"nodePools.{pool_name}", POOL_PATHS))


def pool(cfg: StackConfig, pool_name: str) -> Planned:
    """The pool's component on the stack's cloud."""
    builders: dict[str, Callable[[StackConfig, str], Planned]] = {"gke": gke_pool, "eks": eks_node_group,
                                                                   "aks": aks_pool}
    return builders[clouds.profile(cfg.cluster.cloud).name](cfg, pool_name)


#: The last configs' pool specs: every workload and driver asks for them (a config is immutable).
_SPECS: dict[int, tuple[StackConfig, dict[str, dra_wiring.PoolSpec]]] = {}


def pool_specs(cfg: StackConfig) -> dict[str, dra_wiring.PoolSpec]:
    """Every pool as the DRA wiring sees it (the cloud's own pool name included), by config name."""
    cached = _SPECS.get(id(cfg))
    if cached is not None and cached[0] is cfg:
        return dict(cached[1])
    specs = {}
    for name in cfg.node_pools:
        planned = pool(cfg, name)
        specs[name] = planned.component.spec(planned.name, planned.args)
    if len(_SPECS) >= 8:
        _SPECS.clear()
    _SPECS[id(cfg)] = (cfg, specs)
    return dict(specs)


def node_taints(cfg: StackConfig, pool_names: list[str]) -> list[NodeTaint]:
    """Every taint on the nodes of these pools (stack-set and cloud-added), first occurrence order."""
    specs = pool_specs(cfg)
    return unique_taints(t for name in pool_names for t in dra_wiring.node_taints(cfg.cluster.cloud, specs[name]))


def _taint_dicts(taints: list[NodeTaint]) -> list[dict[str, str]]:
    return [t.as_dict() for t in taints]


def dra_gpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and p.dra]


def device_plugin_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and not p.dra]


def tpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "tpu"]


def pools_needing_driver_installer(cfg: StackConfig) -> list[str]:
    """GPU pools whose NVIDIA driver the stack installs (GKE DRA pools: GKE installs none there)."""
    profile = clouds.profile(cfg.cluster.cloud)
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and profile.library_installs_gpu_driver(p.dra)]


# ---- GKE -----------------------------------------------------------------------------------


def gke_network(cfg: StackConfig, *, project: Any = None) -> Planned:
    cluster, net = cfg.cluster, cfg.cluster.network
    args: dict[str, Any] = {"name": cluster.name, "region": cluster.location, "cidr": net.cidr,
                            "pods_cidr": net.pods_cidr, "services_cidr": net.services_cidr,
                            "private_nodes": cluster.private_nodes}
    if project is not None:
        args["project"] = project
    if net.existing_network:
        args["existing_network"] = net.existing_network
    if net.existing_subnetwork:
        args["existing_subnetwork"] = net.existing_subnetwork
    return Planned(_component("GkeNetwork"), "network", args, KeyPaths("cluster.network", {
        "name": "/cluster.name", "region": "/cluster.location", "private_nodes": "/cluster.privateNodes"}))


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


def gke_cluster(cfg: StackConfig, *, project: Any = PENDING, network: Any = PENDING, subnetwork: Any = PENDING,
                pods_range_name: str | None = None, services_range_name: str | None = None) -> Planned:
    cluster = cfg.cluster
    args: dict[str, Any] = {
        "name": cluster.name,
        "location": cluster.location,
        "zones": list(cluster.zones),
        "project": project,
        "network": network,
        "subnetwork": subnetwork,
        "pods_cidr": cluster.network.pods_cidr,
        "services_cidr": cluster.network.services_cidr,
        "kubernetes_version": cluster.kubernetes_version,
        "release_channel": cluster.release_channel,
        "private_nodes": cluster.private_nodes,
        "public_endpoint": cluster.control_plane.public_endpoint,
        "authorized_networks": list(cluster.control_plane.authorized_networks),
        "dns_endpoint": cluster.control_plane.dns_endpoint,
        "runner_cidrs": list(cluster.control_plane.runner_cidrs),
        "deletion_protection": cluster.deletion_protection,
        "labels": dict(cluster.labels),
        "system_pool": {"machine_type": cluster.system_pool.machine_type, "min_nodes": cluster.system_pool.min,
                        "max_nodes": cluster.system_pool.max, "disk_size_gb": cluster.system_pool.disk_size_gb},
    }
    if pods_range_name and services_range_name:
        args["pods_range_name"], args["services_range_name"] = pods_range_name, services_range_name
    return Planned(_component("GkeCluster"), "gke", args, KeyPaths("cluster", CLUSTER_PATHS))


def driver_installer(cfg: StackConfig, node_pools: list[Any] | None = None) -> Planned:
    pools = pools_needing_driver_installer(cfg)
    images = cfg.drivers.nvidia_driver_installer
    args = {
        "node_pools": node_pools if node_pools is not None else list(pools),
        "node_taints": _taint_dicts(node_taints(cfg, pools)),
        "driver_version": images.driver_version,
        "installer_image": images.installer_image,
        "partition_image": images.partition_image,
        "pause_image": images.pause_image,
    }
    return Planned(_component("NvidiaDriverInstaller"), "nvidia-driver-installer", args,
                   KeyPaths("drivers.nvidiaDriverInstaller", {"node_pools": "/nodePools", "node_taints": FROM_POOLS}))


def nvidia_dra(cfg: StackConfig) -> Planned:
    chart = cfg.drivers.nvidia_dra
    args = {"cloud": cfg.cluster.cloud, "node_taints": _taint_dicts(node_taints(cfg, dra_gpu_pools(cfg))),
            **_chart_args(chart)}
    name = {"gke": "nvidia-dra", "eks": "nvidia-dra-driver", "aks": "nvidia-dra-driver"}[
        clouds.profile(cfg.cluster.cloud).name]
    return Planned(_component("NvidiaDraDriver"), name, args, KeyPaths("drivers.nvidiaDra", {
        **CHART_PATHS, "cloud": "/cluster.cloud", "node_taints": FROM_POOLS}))


def tpu_dra(cfg: StackConfig) -> Planned:
    args = {"node_taints": _taint_dicts(node_taints(cfg, tpu_pools(cfg))), **_chart_args(cfg.drivers.tpu_dra)}
    return Planned(_component("TpuDraDriver"), "tpu-dra", args, KeyPaths("drivers.tpuDra", {
        **CHART_PATHS, "node_taints": FROM_POOLS}))


def device_plugin(cfg: StackConfig) -> Planned:
    return Planned(_component("NvidiaDevicePlugin"), "nvidia-device-plugin", _chart_args(cfg.drivers.nvidia_device_plugin),
                   KeyPaths("drivers.nvidiaDevicePlugin", CHART_PATHS))


def compute_class(cfg: StackConfig, class_name: str, node_pools: list[Any] | None = None) -> Planned:
    cc = cfg.compute_classes[class_name]
    args: dict[str, Any] = {"class_name": class_name,
                            "node_pools": node_pools if node_pools is not None else list(cc.pools)}
    if cc.consolidation_delay_minutes is not None:
        args["consolidation_delay_minutes"] = cc.consolidation_delay_minutes
    if cc.when_unsatisfiable:
        args["when_unsatisfiable"] = cc.when_unsatisfiable
    if cc.active_migration is not None:
        args["optimize_rule_priority"] = cc.active_migration.optimize_rule_priority
    return Planned(_component("GkeComputeClass"), class_name, args, KeyPaths(f"computeClasses.{class_name}", {
        "node_pools": "pools", "optimize_rule_priority": "activeMigration.optimizeRulePriority",
        "class_name": ""}))


# ---- EKS -----------------------------------------------------------------------------------


def eks_network(cfg: StackConfig) -> Planned:
    cluster, net = cfg.cluster, cfg.cluster.network
    args = {"cluster_name": cluster.name, "cidr": net.cidr, "zones": list(cluster.zones),
            "existing_subnet_ids": list(net.existing_subnet_ids), "nat_gateway_per_zone": net.nat_gateway_per_zone,
            "tags": dict(cluster.labels)}
    return Planned(_component("EksNetwork"), f"{cluster.name}-network", args, KeyPaths("cluster.network", {
        "cluster_name": "/cluster.name", "zones": "/cluster.zones", "tags": "/cluster.labels"}))


def eks_cluster(cfg: StackConfig, *, subnet_ids: Any = (PENDING,)) -> Planned:
    cluster = cfg.cluster
    args = {
        "name": cluster.name,
        "region": cluster.location,
        "subnet_ids": list(subnet_ids) if isinstance(subnet_ids, tuple) else subnet_ids,
        "kubernetes_version": cluster.kubernetes_version,
        "public_endpoint": cluster.control_plane.public_endpoint,
        "authorized_networks": list(cluster.control_plane.authorized_networks),
        "runner_cidrs": list(cluster.control_plane.runner_cidrs),
        "admin_principals": list(cluster.control_plane.admin_principals),
        "deletion_protection": cluster.deletion_protection,
        "support_type": cluster.eks_support_type,
        "tags": dict(cluster.labels),
        "system_node_group": {"instance_types": list(cluster.system_pool.instance_types),
                              "min_nodes": cluster.system_pool.min, "max_nodes": cluster.system_pool.max,
                              "disk_size_gb": cluster.system_pool.disk_size_gb},
    }
    return Planned(_component("EksCluster"), cluster.name, args, KeyPaths("cluster", CLUSTER_PATHS))


def cluster_autoscaler(cfg: StackConfig, *, oidc_provider_arn: Any = PENDING, oidc_issuer: Any = PENDING,
                       nodegroup_arn_prefix: Any = PENDING) -> Planned:
    name = cfg.cluster.name
    args = {
        "cluster_name": name,
        "region": cfg.cluster.location,
        "oidc_provider_arn": oidc_provider_arn,
        "oidc_issuer": oidc_issuer,
        "nodegroup_arn_prefix": nodegroup_arn_prefix,
        "system_node_group": node_group_name(name, system_node_group()),
        "fallback_orders": [[node_group_name(name, p) for p in cc.pools] for cc in cfg.compute_classes.values()],
        "other_node_groups": [node_group_name(name, p) for p in [system_node_group(), *unlisted_pools(cfg)]],
        "dynamic_resource_allocation": any(p.dra for p in cfg.node_pools.values()),
        "kubernetes_version": cfg.cluster.kubernetes_version,
        **_chart_args(cfg.drivers.cluster_autoscaler),
    }
    return Planned(_component("ClusterAutoscaler"), f"{name}-autoscaler", args, KeyPaths("drivers.clusterAutoscaler", {
        **CHART_PATHS, "cluster_name": "/cluster.name", "region": "/cluster.location",
        "kubernetes_version": "/cluster.kubernetesVersion", "fallback_orders": "/computeClasses"}))


# ---- AKS -----------------------------------------------------------------------------------


def resource_group_name(cfg: StackConfig) -> str:
    """The cluster's resource group: ``cluster.resourceGroup``, or the one the stack builds."""
    return cfg.cluster.resource_group or f"{cfg.cluster.name}-rg"


def aks_network(cfg: StackConfig, *, resource_group: Any = PENDING) -> Planned:
    cluster, net = cfg.cluster, cfg.cluster.network
    args: dict[str, Any] = {"cluster_name": cluster.name, "resource_group_name": resource_group,
                            "location": cluster.location, "cidr": net.cidr, "tags": dict(cluster.labels)}
    if net.existing_subnet_id:
        args["existing_subnet_id"] = net.existing_subnet_id
    return Planned(_component("AksNetwork"), f"{cluster.name}-network", args, KeyPaths("cluster.network", {
        "cluster_name": "/cluster.name", "location": "/cluster.location", "tags": "/cluster.labels",
        "resource_group_name": "/cluster.resourceGroup"}))


def aks_cluster(cfg: StackConfig, *, resource_group: Any = PENDING, node_subnet_id: Any = PENDING) -> Planned:
    cluster = cfg.cluster
    args = {
        "name": cluster.name,
        "resource_group_name": resource_group,
        "location": cluster.location,
        "node_subnet_id": node_subnet_id,
        "zones": list(cluster.zones),
        "kubernetes_version": cluster.kubernetes_version,
        "public_endpoint": cluster.control_plane.public_endpoint,
        "authorized_networks": list(cluster.control_plane.authorized_networks),
        "admin_group_object_ids": list(cluster.control_plane.admin_group_object_ids),
        "tags": dict(cluster.labels),
        "system_pool": {"vm_size": cluster.system_pool.vm_size, "min_nodes": cluster.system_pool.min,
                        "max_nodes": cluster.system_pool.max, "disk_size_gb": cluster.system_pool.disk_size_gb},
    }
    return Planned(_component("AksCluster"), cluster.name, args, KeyPaths("cluster", {
        **CLUSTER_PATHS, "admin_group_object_ids": "controlPlane.adminGroupObjectIds",
        "resource_group_name": "resourceGroup", "node_subnet_id": "network.existingSubnetId",
        "system_pool.vm_size": "systemPool.vmSize", "system_pool.disk_size_gb": "systemPool.diskSizeGb"}))


def aks_pool(cfg: StackConfig, pool_name: str, *, cluster_name: Any = PENDING, resource_group: Any = PENDING,
             node_subnet_id: Any = None) -> Planned:
    pool = cfg.node_pools[pool_name]
    common = _pool_common(cfg, pool_name)
    common.pop("compute_class", None)  # AKS orders pools through the autoscaler's priorities, not node labels
    args: dict[str, Any] = {
        **common,
        "cluster_name": cluster_name,
        "resource_group_name": resource_group,
        "vm_size": pool.vm_size or "",
        "pool_name": pool_name,
        "zones": list(pool.zones or cfg.cluster.zones),
        "kubernetes_version": cfg.cluster.kubernetes_version,
        "tags": {**cfg.cluster.labels, "gpu-fungibility-pool": pool_name},
    }
    if node_subnet_id is not None:
        args["node_subnet_id"] = node_subnet_id
    return Planned(_component("AksGpuNodePool"), pool_name, args, KeyPaths(f"nodePools.{pool_name}", {
        **POOL_PATHS, "zones": "zones", "kubernetes_version": "/cluster.kubernetesVersion"}))


def unlisted_pools(cfg: StackConfig) -> list[str]:
    """Pools no compute class lists, in config order."""
    listed = {p for cc in cfg.compute_classes.values() for p in cc.pools}
    return [name for name in cfg.node_pools if name not in listed]


def aks_priorities(cfg: StackConfig) -> Planned:
    from gpu_fungibility.aks_cluster import SYSTEM_POOL

    args = {"fallback_orders": [list(cc.pools) for cc in cfg.compute_classes.values()],
            "other_pools": [SYSTEM_POOL, *unlisted_pools(cfg)]}
    return Planned(_component("AksAutoscalerPriorities"), f"{cfg.cluster.name}-autoscaler-priorities", args,
                   KeyPaths("computeClasses", {"fallback_orders": "/computeClasses"}))


def aks_device_plugin(cfg: StackConfig) -> Planned:
    """The device plugin, tolerating every taint of the classic pools: on AKS a Spot pool's nodes carry
    ``kubernetes.azure.com/scalesetpriority=spot:NoSchedule``, which the chart's values do not tolerate."""
    from gpu_fungibility import helm_values
    from gpu_fungibility.device_plugin import device_plugin_values

    planned = device_plugin(cfg)
    library = device_plugin_values()["tolerations"]
    extra = [{"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
             for t in node_taints(cfg, device_plugin_pools(cfg)) if t.key != library[0]["key"]]
    values = helm_values.merge({"tolerations": [*library, *extra]}, planned.args.get("values") or {})
    return Planned(planned.component, planned.name, {**planned.args, "values": values}, planned.paths)


def aks_components(cfg: StackConfig) -> list[Callable[[], Planned]]:
    # the cluster is checked with the resource group's name: the configured one, or the one the stack builds
    planned: list[Callable[[], Planned]] = [lambda: aks_network(cfg),
                                            lambda: aks_cluster(cfg, resource_group=resource_group_name(cfg))]
    planned += [lambda p=p: aks_pool(cfg, p) for p in cfg.node_pools]
    if device_plugin_pools(cfg):
        planned.append(lambda: aks_device_plugin(cfg))
    if cfg.compute_classes:
        planned.append(lambda: aks_priorities(cfg))
    return planned


# ---- in the cluster ------------------------------------------------------------------------


def workload_namespaces(cfg: StackConfig) -> list[str]:
    """Every namespace the workloads and shared claims live in, in config order."""
    names = [*(w.namespace for w in cfg.workloads.values()), *(c.namespace for c in cfg.shared_claims.values())]
    return list(dict.fromkeys(names))


def namespace(cfg: StackConfig, name: str, hf_token: Any = None) -> Planned:
    args: dict[str, Any] = {"namespace": name}
    if hf_token is not None:
        args["hf_token"] = hf_token
    users = [f"workloads.{w}.namespace" for w, wl in cfg.workloads.items() if wl.namespace == name]
    users += [f"sharedClaims.{c}.namespace" for c, sc in cfg.shared_claims.items() if sc.namespace == name]
    return Planned(_component("WorkloadNamespace"), f"ns-{name}", args, KeyPaths("", {"namespace": "/" + users[0],
                                                                          "hf_token": "/hfToken"}))


def _placement_claim(cfg: StackConfig, target: Workload | SharedClaim, device_class: str | None) -> dict[str, Any]:
    claim: dict[str, Any] = {"namespace": target.namespace}

    def alternative(pool_name: str) -> dict[str, Any]:
        pool = cfg.node_pools[pool_name]
        alt: dict[str, Any] = {"accelerator_type": pool.accelerator.type, "count": pool.accelerator.count}
        if device_class:
            alt["device_class"] = device_class
        return alt

    if target.compute_class:
        claim["alternatives"] = [{"name": p, **alternative(p)} for p in cfg.compute_classes[target.compute_class].pools]
    elif target.pool:
        claim["exactly"] = alternative(target.pool)
    return {**claim, **_tolerations(target)}


def _tolerations(target: Workload | SharedClaim) -> dict[str, Any]:
    """The claim's device tolerations, only where the config sets some (plans without them are unchanged)."""
    if not target.device_tolerations:
        return {}
    return {"tolerations": [t.model_dump(exclude_none=True) for t in target.device_tolerations]}


def _claim_paths(base: str, target: Workload | SharedClaim) -> dict[str, str]:
    group = f"/computeClasses.{target.compute_class}.pools" if target.compute_class else f"/{base}.pool"
    return {"namespace": f"/{base}.namespace", "alternatives": group, "exactly": f"/{base}.pool",
            "mig.slices": f"/{base}.mig", "mig": f"/{base}.mig", "tolerations": f"/{base}.deviceTolerations"}


def dra_claims(cfg: StackConfig) -> Planned:
    """Every DeviceClass, shared claim and claim template of the stack, in one component."""
    device_classes = {
        name: {"driver": dc.driver, **({"min_memory_gi": dc.min_memory_gi} if dc.min_memory_gi else {}),
               "product_names": list(dc.product_names), "architectures": list(dc.architectures),
               "expressions": list(dc.expressions), **({"devices": dc.devices} if dc.devices != "gpu" else {})}
        for name, dc in cfg.device_classes.items()
    }
    table: dict[str, str | None] = {f"device_classes.{n}": f"/deviceClasses.{n}" for n in cfg.device_classes}
    for n in cfg.device_classes:
        table.update({f"device_classes.{n}.{arg}": f"/deviceClasses.{n}.{_camel(arg)}"
                      for arg in gpu_fungibility.DeviceClassSpec.__annotations__})
    shared = {}
    for name, claim in cfg.shared_claims.items():
        if not resolvable(cfg, claim):
            continue
        shared[name] = _placement_claim(cfg, claim, claim.device_class)
        for arg, key in _claim_paths(f"sharedClaims.{name}", claim).items():
            table[f"shared_claims.{name}.{arg}"] = key
        table[f"shared_claims.{name}"] = f"/sharedClaims.{name}"
        if claim.device_class:
            count = len(shared[name].get("alternatives") or [None])
            for i in range(count):
                where = f"alternatives[{i}]" if "alternatives" in shared[name] else "exactly"
                table[f"shared_claims.{name}.{where}.device_class"] = f"/sharedClaims.{name}.deviceClass"
    templates = {}
    for name, wl in cfg.workloads.items():
        if wl.shared_claim or not resolvable(cfg, wl):
            continue
        if wl.mig is not None:
            templates[name] = {"namespace": wl.namespace, "mig": {
                "accelerator_type": cfg.node_pools[wl.pool].accelerator.type if wl.pool else "",
                "slices": [{"name": s.name, "profile": s.profile} for s in wl.mig]}, **_tolerations(wl)}
        else:
            templates[name] = _placement_claim(cfg, wl, None)
        for arg, key in _claim_paths(f"workloads.{name}", wl).items():
            table[f"claim_templates.{name}.{arg}"] = key
        table[f"claim_templates.{name}"] = f"/workloads.{name}"
    args = {"device_classes": device_classes, "shared_claims": shared, "claim_templates": templates}
    return Planned(_component("DraClaims"), "dra-claims", args, KeyPaths("", table))


def workload_claim(cfg: StackConfig, name: str) -> dict[str, Any]:
    """How the workload's pods reference their claim: its template, or the shared claim it names."""
    from gpu_fungibility.claims import template_name

    wl = cfg.workloads[name]
    return {"claim_name": wl.shared_claim} if wl.shared_claim else {"template_name": template_name(name)}


def workload_pools(cfg: StackConfig, name: str) -> list[str]:
    return cfg.placement_pools(cfg.workloads[name])


def machine_types(cfg: StackConfig, pool_name: str) -> list[str]:
    """The machine type (GKE), instance types (EKS) or VM size (AKS) of a pool."""
    pool = cfg.node_pools[pool_name]
    single = pool.machine_type or pool.vm_size
    return [single] if single else list(pool.instance_types or [])


def pods_per_node(cfg: StackConfig, name: str) -> int:
    """How many serving pods may share one node with this workload's: every pod of a shared claim lands on
    the claim's node; MIG pods take one set of slices of one GPU each."""
    wl = cfg.workloads[name]
    if wl.shared_claim:
        return max(1, sum(w.replicas for w in cfg.workloads.values() if w.shared_claim == wl.shared_claim))
    if wl.mig and wl.pool:
        users = [w for w in cfg.workloads.values() if w.mig and w.pool == wl.pool]
        profiles = [piece.profile for w in users for piece in w.mig or []]
        pool = cfg.node_pools[wl.pool]
        # A layout that does not fit (0 sets) is reported by the rules; size as if one set did.
        sets = max(1, devices.mig_sets_per_gpu(profiles, pool.accelerator.type))
        return pool.accelerator.count * sets * len(users)
    return 1


def workload(cfg: StackConfig, name: str, *, hf_secret_name: str | None = None) -> Planned:
    wl = cfg.workloads[name]
    profile = clouds.profile(cfg.cluster.cloud)
    pools = workload_pools(cfg, name)
    specs = pool_specs(cfg)
    target = cfg.shared_claims[wl.shared_claim] if wl.shared_claim else wl
    args: dict[str, Any] = {
        "namespace": wl.namespace,
        "accelerator_family": cfg.family_of(wl),
        "claim": workload_claim(cfg, name),
        "replicas": wl.replicas,
        "port": wl.port,
        "extra_args": list(wl.extra_args),
        "tolerate_taints": _taint_dicts(node_taints(cfg, pools)),
        "service": {"type": wl.service.type, "public": wl.service.public, "port": wl.service.port},
        "cloud": profile.name,
    }
    selector = profile.workload_node_selector([specs[p] for p in pools], target.compute_class)
    if selector:
        args["node_selector"] = selector
    args["pools"] = [{"name": p, "machine_types": machine_types(cfg, p), "spot": cfg.node_pools[p].spot}
                     for p in pools]
    if len(pools) > 1:  # the same one list as the claim's firstAvailable and the autoscaler's order
        args["pool_preference"] = [{"name": p, "node_labels": {profile.node_pool_label: specs[p].name}}
                                   for p in pools]
    args["pods_per_node"] = pods_per_node(cfg, name)
    resources = {k: str(v) for k, v in (("cpu", wl.resources.cpu), ("memory", wl.resources.memory)) if v is not None}
    if resources:
        args["resources"] = resources
    optional = {"model": wl.model, "image": wl.image, "max_model_len": wl.max_model_len,
                "gpu_memory_utilization": wl.gpu_memory_utilization, "hf_secret_name": hf_secret_name}
    args.update({k: v for k, v in optional.items() if v is not None})
    if wl.mig is not None:
        args["mig_servers"] = [{"name": s.name, "model": s.model, "port": s.port, "extra_args": list(s.extra_args)}
                               for s in wl.mig]
    return Planned(_component("VllmWorkload"), name, args, KeyPaths(f"workloads.{name}", {
        "mig_servers": "mig", "accelerator_family": "", "tolerate_taints": FROM_POOLS, "claim": "",
        "cloud": "/cluster.cloud", "pools": FROM_POOLS, "pool_preference": FROM_POOLS,
        "pods_per_node": "replicas"}))


# ---- every component of a stack ------------------------------------------------------------


def _gke_components(cfg: StackConfig) -> list[Callable[[], Planned]]:
    planned: list[Callable[[], Planned]] = [lambda: gke_network(cfg), lambda: gke_cluster(cfg)]
    planned += [lambda p=p: gke_pool(cfg, p) for p in cfg.node_pools]
    if pools_needing_driver_installer(cfg):
        planned.append(lambda: driver_installer(cfg))
    if tpu_pools(cfg):
        planned.append(lambda: tpu_dra(cfg))
    return planned + [lambda c=c: compute_class(cfg, c) for c in cfg.compute_classes]


def _eks_components(cfg: StackConfig) -> list[Callable[[], Planned]]:
    planned: list[Callable[[], Planned]] = [lambda: eks_network(cfg), lambda: eks_cluster(cfg)]
    planned += [lambda p=p: eks_node_group(cfg, p) for p in cfg.node_pools]
    if device_plugin_pools(cfg):
        planned.append(lambda: device_plugin(cfg))
    return [*planned, lambda: cluster_autoscaler(cfg)]


def resolvable(cfg: StackConfig, target: Workload | SharedClaim) -> bool:
    """Whether every pool, compute class and shared claim the target names exists and its pools'
    accelerators are known (the config rules and the pools' checks report what is not)."""
    shared = getattr(target, "shared_claim", None)
    if shared:
        return shared in cfg.shared_claims and resolvable(cfg, cfg.shared_claims[shared])
    if target.compute_class:
        cc = cfg.compute_classes.get(target.compute_class)
        pools = list(cc.pools) if cc is not None else [None]
    else:
        pools = [target.pool]
    # A pool with an unknown accelerator is reported by its own check; what it would serve is not checked twice.
    return all(p in cfg.node_pools and cfg.node_pools[p].accelerator.known for p in pools)


def planned_components(cfg: StackConfig) -> list[Planned]:
    """Every component the stack will create, with plain stand-ins for other resources' outputs.

    A workload or claim that names a pool, compute class or shared claim the config lacks is
    left out: the config rules report the missing name, and the rest is still checked.
    """
    builders = {"gke": _gke_components, "eks": _eks_components, "aks": aks_components}[
        clouds.profile(cfg.cluster.cloud).name](cfg)
    if dra_gpu_pools(cfg):
        builders.append(lambda: nvidia_dra(cfg))
    if cfg.workloads or cfg.device_classes or cfg.shared_claims:
        builders += [lambda ns=ns: namespace(cfg, ns) for ns in workload_namespaces(cfg)]
        builders.append(lambda: dra_claims(cfg))
        builders += [lambda w=w: workload(cfg, w) for w, wl in cfg.workloads.items() if resolvable(cfg, wl)]
    planned = []
    for build_one in builders:
        try:
            planned.append(build_one())
        except KeyError:
            continue  # a dangling name the config rules report
    return planned


def argument_issues(cfg: StackConfig) -> Issues:
    """Every component's own check over the arguments the stack passes, in config key paths."""
    issues: Issues = []
    for planned in planned_components(cfg):
        issues += planned.issues()
    return list(dict.fromkeys(issues))


def create(planned: Planned, opts: Any = None) -> Any:
    """Construct the planned component; an argument error is reported as a config error with key paths."""
    from gpu_fungibility.errors import ComponentArgsError

    from stacks.loader import ConfigError

    try:
        return planned.component(planned.name, planned.args, opts=opts)
    except ComponentArgsError as exc:
        raise ConfigError([(planned.paths(path) or "nodePools", message) for path, message in exc.issues]) from None
