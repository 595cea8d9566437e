"""GKE accelerator node pools (GPU and TPU), wired for DRA.

Labels and taints come only from :mod:`components.dra_wiring` and the GKE
profile. The GKE node pool is named exactly ``node_pool_name`` (default: the
component's name), with no random suffix: a ComputeClass refers to node pools
by that name, and the ``node_pool_name`` output feeds it.

DRA GPU pools set ``gpuDriverVersion: INSTALLATION_DISABLED``: GKE then
installs neither its driver nor its device plugin there, and the driver
installer DaemonSet (:class:`NvidiaDriverInstaller`) and the NVIDIA DRA driver
take over (seed 000). A GPU pool with ``dra: false`` keeps GKE's managed
driver and device plugin (``DEFAULT``).
"""

import math
from typing import TYPE_CHECKING, NotRequired

import pulumi

from ...base import Issues
from ...node_pool_base import AcceleratorPool
from ...node_selection import API_EFFECTS, NodeTaint
from ...pool_args import AcceleratorPoolArgs, autoscaling_of
from ...wiring_keys import PoolSpec
from . import arguments as gke_rules
from . import machines as gke_machines
from .labels import gcp_label_issues

if TYPE_CHECKING:
    import pulumi_gcp as gcp

CLOUD = "gke"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
DRIVER_INSTALLATION_DISABLED = "INSTALLATION_DISABLED"
DRIVER_DEFAULT = "DEFAULT"
IMAGE_TYPE = "COS_CONTAINERD"  # the preloaded driver installer is COS-only


def gpu_driver_version(dra: bool) -> str:
    """What GKE is told about the NVIDIA driver of a GPU pool."""
    return DRIVER_INSTALLATION_DISABLED if dra else DRIVER_DEFAULT


def gke_taints(taints: list[NodeTaint]) -> "list[gcp.container.NodePoolNodeConfigTaintArgs]":
    import pulumi_gcp as gcp

    return [gcp.container.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=API_EFFECTS[t.effect])
            for t in taints]


def tpu_placement(machine_type: str, topology: str | None) -> "gcp.container.NodePoolPlacementPolicyArgs | None":
    """A COMPACT placement with ``tpu_topology`` for multi-host TPU slices only.

    A single-host slice (the machine's own topology, e.g. ct6e-standard-1t = 1x1)
    needs no placement policy.
    """
    import pulumi_gcp as gcp

    if not topology:
        return None
    shape = gke_machines.machine_shape(machine_type)
    chips = math.prod(int(d) for d in topology.split("x"))
    if shape is None or chips <= shape.count:
        return None
    return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=topology)


def secure_node_config(
    *,
    machine_type: str,
    disk_size_gb: int,
    service_account: pulumi.Input[str],
    spot: bool = False,
    labels: dict[str, str] | None = None,
    taints: list[NodeTaint] | None = None,
    guest_accelerators: "list[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs] | None" = None,
    resource_labels: dict[str, str] | None = None,
) -> "gcp.container.NodePoolNodeConfigArgs":
    """Node settings every pool shares: COS, shielded boot, GKE metadata server, own service account."""
    import pulumi_gcp as gcp

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


class GkeNodePoolArgs(AcceleratorPoolArgs):
    """One GKE accelerator node pool (GPU or TPU). Its autoscaling counts are totals over its zones; the
    accelerator is named as GKE names it (the catalog's names)."""

    cluster: pulumi.Input[str]
    """The cluster's name (``GkeCluster.cluster_name``)."""
    location: str
    """The cluster's location (region or zone)."""
    zones: list[str]
    """Zones the pool's nodes run in."""
    machine_type: str
    """The machine type, e.g. ``a2-ultragpu-1g`` or ``ct6e-standard-1t``; checked against the accelerator."""
    service_account: pulumi.Input[str]
    """The nodes' service account email (``GkeCluster.node_service_account``)."""
    project: NotRequired[pulumi.Input[str]]
    """The GCP project (default: the provider's project)."""
    node_pool_name: NotRequired[str]
    """The GKE node pool's name (default: the component's name)."""
    topology: NotRequired[str]
    """TPU pools: the slice topology (default: the machine's single-host topology)."""
    compute_class: NotRequired[str]
    """The GKE ComputeClass the pool belongs to: its nodes carry the class's label and taint."""
    resource_labels: NotRequired[dict[str, str]]
    """GCP resource labels on the pool's VMs."""


class _GkeAcceleratorPool(AcceleratorPool):
    """What GPU and TPU pools share: one GKE node pool of hardened nodes, named exactly ``node_pool_name``."""

    CLOUD = CLOUD
    NAME_ARGUMENT = "node_pool_name"

    node_pool_name: pulumi.Output[str]
    """The GKE node pool's name (what a ComputeClass lists)."""

    def build(self, name: str, args: GkeNodePoolArgs, spec: PoolSpec) -> None:
        import pulumi_gcp as gcp

        zones = list(args["zones"])
        low, high = autoscaling_of(args)
        node_config = secure_node_config(
            machine_type=args["machine_type"],
            disk_size_gb=args.get("disk_size_gb", 200),
            service_account=args["service_account"],
            spot=spec.spot,
            labels=self.stack_labels(spec),
            taints=self.stack_taints(spec),
            guest_accelerators=self._guest_accelerators(spec),
            resource_labels=dict(args.get("resource_labels") or {}),
        )
        node_pool = gcp.container.NodePool(
            f"{name}-nodepool",
            gcp.container.NodePoolArgs(
                name=spec.name,
                cluster=args["cluster"],
                location=args["location"],
                project=args.get("project"),
                node_locations=zones,
                initial_node_count=initial_nodes_per_zone(low, high, len(zones)),
                autoscaling=gcp.container.NodePoolAutoscalingArgs(
                    total_min_node_count=low,
                    total_max_node_count=high,
                    # Spot capacity: take it in whichever zone has it.
                    location_policy="ANY" if spec.spot else "BALANCED",
                ),
                management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
                # Accelerators are scarce: upgrade in place rather than asking for a surge node.
                upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=0,
                                                                            max_unavailable=1),
                placement_policy=self._placement(spec),
                node_config=node_config,
            ),
            # initial_node_count only matters at creation; changing it would replace the pool.
            opts=self.child(ignore_changes=["initialNodeCount"]),
        )
        self.node_pool_name = node_pool.name

    @classmethod
    def machine_types(cls, args: GkeNodePoolArgs) -> list[str]:
        return [args["machine_type"]]

    @classmethod
    def cloud_issues(cls, name: str, args: GkeNodePoolArgs) -> Issues:
        issues = gcp_label_issues(args.get("resource_labels") or {}, "resource_labels")
        issues += gke_rules.node_pool_name_issues(str(args.get("node_pool_name") or name))
        if not args.get("zones"):
            issues.append(("zones", "list at least one zone"))
        return issues

    def _guest_accelerators(self, spec: PoolSpec):
        return None

    def _placement(self, spec: PoolSpec):
        return None


class GkeGpuNodePool(_GkeAcceleratorPool):
    """A GKE GPU node pool: machine type, guest accelerators, spot, autoscaling, DRA labels and taints."""

    LEGACY_TYPE = "gpu-fungibility:gke_pools:GkeGpuNodePool"
    FAMILY = "gpu"

    def __init__(self, name: str, args: GkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def _guest_accelerators(self, spec: PoolSpec):
        import pulumi_gcp as gcp

        return [gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
            type=spec.accelerator_type,
            count=spec.accelerator_count,
            gpu_driver_installation_config=(
                gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                    gpu_driver_version=gpu_driver_version(spec.dra))),
        )]


class GkeTpuNodePool(_GkeAcceleratorPool):
    """A GKE TPU node pool (e.g. ct6e-standard-1t) for the TPU DRA driver (seed 003)."""

    LEGACY_TYPE = "gpu-fungibility:gke_pools:GkeTpuNodePool"
    FAMILY = "tpu"

    def __init__(self, name: str, args: GkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def _placement(self, spec: PoolSpec):
        return tpu_placement(spec.machine_type or "", spec.topology)
