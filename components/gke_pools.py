"""GKE accelerator node pools (GPU and TPU), wired for DRA.

Labels and taints come only from :mod:`components.dra_wiring`. The GKE node
pool is named exactly after its ``nodePools`` key, with no random suffix: a
ComputeClass refers to node pools by that name, and the NodePool's ``name``
output feeds the ComputeClass so the two cannot disagree.

DRA GPU pools set ``gpuDriverVersion: INSTALLATION_DISABLED``: GKE then installs
neither its driver nor its device plugin there, and the stack's own driver
installer DaemonSet and the NVIDIA DRA driver take over (seed 000). A GPU pool
with ``dra: false`` keeps GKE's managed driver and device plugin (``DEFAULT``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components import catalog, dra_wiring
from stacks.config import NodePool, StackConfig

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
DRIVER_INSTALLATION_DISABLED = "INSTALLATION_DISABLED"
DRIVER_DEFAULT = "DEFAULT"
IMAGE_TYPE = "COS_CONTAINERD"  # the preloaded driver installer is COS-only

#: Kubernetes taint effect -> GKE API spelling.
GKE_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE",
                    "NoExecute": "NO_EXECUTE"}


def gpu_driver_version(pool: NodePool) -> str | None:
    """What GKE is told about the NVIDIA driver of a pool (None for TPU pools)."""
    if pool.family != "gpu":
        return None
    return DRIVER_INSTALLATION_DISABLED if pool.dra else DRIVER_DEFAULT


def pools_needing_driver_installer(cfg: StackConfig) -> list[str]:
    """GKE GPU pools whose driver the stack installs (GKE's own installation is disabled)."""
    if cfg.cluster.cloud != "gke":
        return []
    return [n for n, p in cfg.node_pools.items() if gpu_driver_version(p) == DRIVER_INSTALLATION_DISABLED]


def gke_taints(taints: list[dra_wiring.NodeTaint]) -> list[gcp.container.NodePoolNodeConfigTaintArgs]:
    return [gcp.container.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=GKE_TAINT_EFFECT[t.effect])
            for t in taints]


def tpu_placement(pool: NodePool) -> gcp.container.NodePoolPlacementPolicyArgs | None:
    """A COMPACT placement with ``tpu_topology`` for multi-host TPU slices only.

    A single-host slice (the machine's own topology, e.g. ct6e-standard-1t = 1x1)
    needs no placement policy.
    """
    if pool.family != "tpu" or not pool.accelerator.topology:
        return None
    shape = catalog.gke_machine_shape(pool.machine_type or "")
    chips = math.prod(int(d) for d in pool.accelerator.topology.split("x"))
    if shape is None or chips <= shape.count:
        return None
    return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=pool.accelerator.topology)


def secure_node_config(
    *,
    machine_type: str,
    disk_size_gb: int,
    service_account: pulumi.Input[str],
    spot: bool = False,
    labels: dict[str, str] | None = None,
    taints: list[dra_wiring.NodeTaint] | None = None,
    guest_accelerators: list[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs] | None = None,
    resource_labels: dict[str, str] | None = None,
) -> gcp.container.NodePoolNodeConfigArgs:
    """Node settings every pool shares: COS, shielded boot, GKE metadata server, own service account."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        disk_size_gb=disk_size_gb,
        image_type=IMAGE_TYPE,
        spot=spot,
        labels=labels or {},
        taints=gke_taints(taints or []),
        guest_accelerators=guest_accelerators,
        service_account=service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],  # access is governed by the account's IAM roles
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
        metadata={"disable-legacy-endpoints": "true"},
        resource_labels=resource_labels or None,
    )


def initial_nodes_per_zone(minimum: int, maximum: int, zones: int) -> int:
    """Nodes per zone at creation: enough for ``min`` in total, never above ``max`` in total."""
    return min(math.ceil(minimum / zones), maximum // zones)


@dataclass(frozen=True)
class GkeNodePoolArgs:
    """One ``nodePools`` entry of a GKE stack.

    ``cluster``: the cluster's name (an output, so the pool waits for it);
    ``service_account``: the nodes' least-privilege service account email.
    """

    config: StackConfig
    pool_name: str
    cluster: pulumi.Input[str]
    service_account: pulumi.Input[str]
    project: pulumi.Input[str] | None = None


def _validate(args: GkeNodePoolArgs, family: str) -> NodePool:
    cfg = args.config
    path = f"nodePools.{args.pool_name}"
    issues: list[tuple[str, str]] = []
    pool = cfg.node_pools.get(args.pool_name)
    if cfg.cluster.cloud != "gke":
        issues.append(("cluster.cloud", "GKE node pools need cloud: gke"))
    if pool is None:
        issues.append((path, "no such node pool"))
    else:
        if pool.family != family:
            issues.append((f"{path}.accelerator.type", f"{pool.accelerator.type} is not a {family.upper()}"))
        if not pool.machine_type:
            issues.append((f"{path}.machineType", "required on GKE"))
    if issues:
        from stacks.loader import ConfigError

        raise ConfigError(issues)
    assert pool is not None
    return pool


def _node_pool(parent: pulumi.Resource, name: str, args: GkeNodePoolArgs, pool: NodePool,
               node_config: gcp.container.NodePoolNodeConfigArgs,
               placement: gcp.container.NodePoolPlacementPolicyArgs | None = None) -> gcp.container.NodePool:
    cluster = args.config.cluster
    zones = pool.zones or cluster.zones
    return gcp.container.NodePool(
        f"{name}-nodepool",
        gcp.container.NodePoolArgs(
            name=args.pool_name,
            cluster=args.cluster,
            location=cluster.location,
            project=args.project,
            node_locations=zones,
            initial_node_count=initial_nodes_per_zone(pool.autoscaling.min, pool.autoscaling.max, len(zones)),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.autoscaling.min,
                total_max_node_count=pool.autoscaling.max,
                # Spot capacity: take it in whichever zone has it.
                location_policy="ANY" if pool.spot else "BALANCED",
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            # Accelerators are scarce: upgrade in place rather than asking for a surge node.
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=0,
                                                                        max_unavailable=1),
            placement_policy=placement,
            node_config=node_config,
        ),
        # initial_node_count only matters at creation; changing it would replace the pool.
        opts=pulumi.ResourceOptions(parent=parent, ignore_changes=["initialNodeCount"]),
    )


class _GkeAcceleratorPool(pulumi.ComponentResource):
    """What GPU and TPU pools share: validation, DRA labels and taints, hardened nodes."""

    TYPE = ""
    FAMILY = ""

    node_pool: gcp.container.NodePool
    node_pool_name: pulumi.Output[str]
    labels: dict[str, str]
    taints: list[dra_wiring.NodeTaint]

    def __init__(self, name: str, args: GkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        pool = _validate(args, self.FAMILY)
        cfg = args.config
        self.labels = dra_wiring.pool_labels(cfg, args.pool_name)
        self.taints = dra_wiring.pool_taints(cfg, args.pool_name)
        node_config = secure_node_config(
            machine_type=pool.machine_type or "",
            disk_size_gb=pool.disk_size_gb,
            service_account=args.service_account,
            spot=pool.spot,
            labels=self.labels,
            taints=self.taints,
            guest_accelerators=self._guest_accelerators(pool),
            resource_labels=dict(cfg.cluster.labels),
        )
        self.node_pool = _node_pool(self, name, args, pool, node_config, self._placement(pool))
        self.node_pool_name = self.node_pool.name
        self.register_outputs({"nodePoolName": self.node_pool_name})

    def _guest_accelerators(self, pool: NodePool) -> list[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs] | None:
        return None

    def _placement(self, pool: NodePool) -> gcp.container.NodePoolPlacementPolicyArgs | None:
        return None


class GkeGpuNodePool(_GkeAcceleratorPool):
    """A GPU node pool: machine type, guest accelerators, spot, autoscaling, DRA labels and taints."""

    TYPE = "gpu-fungibility:gke_pools:GkeGpuNodePool"
    FAMILY = "gpu"

    def _guest_accelerators(self, pool: NodePool) -> list[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs]:
        return [gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
            type=pool.accelerator.type,
            count=pool.accelerator.count,
            gpu_driver_installation_config=(
                gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                    gpu_driver_version=gpu_driver_version(pool))),
        )]


class GkeTpuNodePool(_GkeAcceleratorPool):
    """A TPU node pool (e.g. ct6e-standard-1t) for the TPU DRA driver (seed 003)."""

    TYPE = "gpu-fungibility:gke_pools:GkeTpuNodePool"
    FAMILY = "tpu"

    def _placement(self, pool: NodePool) -> gcp.container.NodePoolPlacementPolicyArgs | None:
        return tpu_placement(pool)
