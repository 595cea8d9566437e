"""An AKS agent pool of GPU nodes, wired for DRA or for the classic device plugin.

Labels and taints come from :mod:`components.dra_wiring` and the AKS profile only: DRA pools carry
``nvidia.com/gpu.present=true`` and ``nvidia.com/gpu.dra=true``; every GPU pool is tainted
``nvidia.com/gpu=true:NoSchedule``; AKS itself labels every node ``kubernetes.azure.com/agentpool=<pool>``
and Spot nodes ``kubernetes.azure.com/scalesetpriority=spot``, with the matching NoSchedule taint.

The NVIDIA driver: AKS installs it on GPU pools unless ``gpuProfile.driver`` is ``None``
(learn.microsoft.com/azure/aks/use-nvidia-gpu, "skip GPU driver installation"; the pinned
pulumi-azure-native exposes ``GPUProfileArgs(driver="Install"|"None")``). Every pool here asks for
``Install`` explicitly: the DRA kubelet plugin needs the host's driver, and AKS runs no device plugin on a
pool unless it is a managed GPU pool (``gpuProfile.nvidia.managementMode: Managed``, preview), which this
component never sets. A Spot pool evicts with ``Delete`` and pays up to the on-demand price (``-1``,
learn.microsoft.com/azure/aks/spot-node-pool).
"""

import re
from collections.abc import Mapping
from typing import Any, NotRequired

import pulumi

from ...base import Issues
from ...node_pool_base import AcceleratorPool
from ...node_selection import NodeTaint
from ...pool_args import AcceleratorPoolArgs, autoscaling_of
from ...versions import DEFAULT_KUBERNETES_VERSION, kubernetes_version_problem, minor_version
from ...wiring_keys import AKS_SCALESET_PRIORITY, PoolSpec
from . import arguments as aks_rules
from . import machines as aks_machines

CLOUD = "aks"
#: learn.microsoft.com/azure/aks/create-node-pools: a Linux pool's name is 1-12 lowercase letters and digits,
#: starting with a letter.
POOL_NAME = re.compile(r"[a-z][a-z0-9]{0,11}")
GPU_DRIVER = "Install"
SPOT_MAX_PRICE = -1.0
#: AKS rejects node labels and taints of its reserved prefixes on any node (MicrosoftDocs/azure-aks-docs
#: articles/aks/use-labels.md at f988e7e8, "Reserved prefixes": kubernetes.azure.com/ and kubernetes.io/).
RESERVED_PREFIXES = ("kubernetes.azure.com/", "kubernetes.io/")
#: The agent-pool tag that asked AKS's managed GPU preview for its stack (driver, device plugin, DCGM exporter:
#: azure-aks-docs articles/aks/aks-managed-gpu-nodes.md): a device plugin on a DRA pool. AKS now takes the
#: same request as ``gpuProfile.nvidia.managementMode: Managed`` on the agent pool; this component sets no
#: ``gpuProfile.nvidia`` at all, so only the old tag can reach it through ``tags``, and the policy pack refuses
#: either on a DRA pool (``dra-device-plugin-isolation``, policies/stack_view.py).
MANAGED_GPU_TAG = "EnableManagedGPUExperience"
#: VM sizes whose GPUs AKS drives with NVIDIA's GRID (vGPU) driver (Azure/AgentBaker aks-node-controller/pkg/gpu/
#: skus.go ConvergedGPUDriverSizes at 06836ee2, recorded in tests/fixtures/aks_vm_sizes.json): NVML names a vGPU
#: profile there ("NVIDIA A10-24Q"), not the board, so neither the catalog's product name nor its memory
#: describes what the DRA driver would publish. NVadsA10 v5 (every size, NV36adms too) and NC A10 v4.
#: AKS writes the Spot label and taint into a Spot pool's own ``nodeLabels``/``nodeTaints`` (azure-aks-docs
#: spot-node-pool), and refuses its reserved prefixes in what a pool asks for (use-labels.md): the inputs leave
#: them out and these paths are ignored, so a refresh never turns them into an update that comes back forever.
#: The library's own taints on a Spot pool (the GPU taint) are fixed by the library, so ignoring the taint
#: list there loses nothing a stack config can change; a new pool picks up a changed taint.
SPOT_WRITTEN_BY_AKS = [f'nodeLabels["{AKS_SCALESET_PRIORITY}"]', "nodeTaints"]
GRID_DRIVER_SIZES = frozenset({
    "standard_nv6ads_a10_v5", "standard_nv12ads_a10_v5", "standard_nv18ads_a10_v5", "standard_nv36ads_a10_v5",
    "standard_nv36adms_a10_v5", "standard_nv72ads_a10_v5",
    "standard_nc8ads_a10_v4", "standard_nc16ads_a10_v4", "standard_nc32ads_a10_v4",
})
#: RTX PRO 6000 Blackwell Server Edition sizes (NC RTX PRO 6000 BSE v6), which AKS drives with the GRID v20
#: driver too (Azure/AgentBaker aks-node-controller/pkg/gpu/skus.go ``RTXPro6000GPUDriverSizes`` at 78728b81,
#: preview aliases included; copied in tests/fixtures/agentbaker_rtxpro6000_sizes.txt). Not in the catalog, so
#: a pool of them is refused as an unknown size first; listed so the GRID reason is right when they are added.
RTX_PRO_GRID_DRIVER_SIZES = frozenset({
    "standard_nc24lds_xl_rtxpro6000bse_v6", "standard_nc36ds_xl_rtxpro6000bse_v6",
    "standard_nc36lds_xl_rtxpro6000bse_v6", "standard_nc72ds_xl_rtxpro6000bse_v6",
    "standard_nc72lds_xl_rtxpro6000bse_v6", "standard_nc144ds_xl_rtxpro6000bse_v6",
    "standard_nc144lds_xl_rtxpro6000bse_v6", "standard_nc288ds_xl_rtxpro6000bse_v6",
    "standard_nc288lds_xl_rtxpro6000bse_v6", "standard_nc128ds_xl_rtxpro6000bse_v6",
    "standard_nc128lds_xl_rtxpro6000bse_v6", "standard_nc256ds_xl_rtxpro6000bse_v6",
    "standard_nc256lds_xl_rtxpro6000bse_v6", "standard_nc320ds_xl_rtxpro6000bse_v6",
    "standard_nc320lds_xl_rtxpro6000bse_v6",
})
#: The Cluster Autoscaler's node groups on AKS are the pools' scale sets (kubernetes/autoscaler
#: cluster-autoscaler/cloudprovider/azure/azure_scale_set.go: a node group's Id is the scale set's name),
#: which AKS names ``aks-<pool>-<number>-vmss`` in the node resource group.
VMSS_SUFFIX = "-[0-9]+-vmss"


def runs_grid_driver(vm_size: str) -> bool:
    """Whether AKS drives this size's GPU with the GRID (vGPU) driver (NVadsA10 v5, NC A10 v4, NC RTX PRO 6000
    BSE v6)."""
    return vm_size.lower() in GRID_DRIVER_SIZES or vm_size.lower() in RTX_PRO_GRID_DRIVER_SIZES


def dra_pool_issues(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a DRA pool cannot be on AKS: a GRID (vGPU) size, or a pool tagged for AKS's managed GPU stack."""
    issues = []
    vm_size = str(args.get("vm_size") or "")
    if runs_grid_driver(vm_size):
        issues.append(("vm_size", f"{vm_size} runs NVIDIA's GRID (vGPU) driver on AKS: NVML names a vGPU profile "
                                  "(e.g. NVIDIA A10-24Q) with its own memory, which no DRA selector here is built "
                                  "for; use it with dra: false (the device plugin), or an NC size for DRA"))
    if str((args.get("tags") or {}).get(MANAGED_GPU_TAG, "")).lower() == "true":
        issues.append((f"tags.{MANAGED_GPU_TAG}", "turns on AKS's managed GPU stack, whose device plugin would "
                                                  "run beside the DRA kubelet plugin; remove it from DRA pools"))
    return issues


def scale_set_regex(pool_name: str) -> str:
    """A regex for exactly the scale set of ``pool_name`` (known at preview time, unlike the name itself)."""
    return f"^aks-{re.escape(pool_name)}{VMSS_SUFFIX}$"


def node_taint_strings(taints: list[NodeTaint]) -> list[str]:
    """Taints as AKS spells them: ``key=value:Effect``."""
    return [f"{t.key}={t.value}:{t.effect}" for t in taints]


class AksGpuNodePoolArgs(AcceleratorPoolArgs):
    """One AKS agent pool of NVIDIA GPU nodes. Spot VMs are evicted with Delete at a max price of -1 (the
    on-demand price); the managed autoscaler cannot scale a DRA pool up from zero."""

    cluster_name: pulumi.Input[str]
    """The cluster's name (``AksCluster.cluster_name``)."""
    resource_group_name: pulumi.Input[str]
    """The cluster's resource group."""
    vm_size: str
    """The GPU VM size, e.g. ``Standard_NC24ads_A100_v4``."""
    pool_name: NotRequired[str]
    """The agent pool's name: 1-12 lowercase letters and digits (default: the component's name)."""
    node_subnet_id: NotRequired[pulumi.Input[str]]
    """The nodes' subnet (default: the cluster's)."""
    zones: NotRequired[list[str]]
    """Availability zones (``"1"``, ``"2"``, ``"3"``; default: regional)."""
    kubernetes_version: NotRequired[str]
    """The nodes' Kubernetes version (default ``1.35``)."""
    tags: NotRequired[dict[str, str]]
    """Azure tags on the agent pool."""


class AksGpuNodePool(AcceleratorPool):
    """An AKS agent pool of GPU nodes with the host's NVIDIA driver, wired for DRA or the device plugin."""

    CLOUD = CLOUD
    NAME_ARGUMENT = "pool_name"

    pool_name: str
    """The agent pool's name."""
    scale_set_regex: str
    """A regex over the pool's scale set name, as the priority expander matches it."""

    def __init__(self, name: str, args: AksGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def build(self, name: str, args: AksGpuNodePoolArgs, spec: PoolSpec) -> None:
        from pulumi_azure_native import containerservice as cs

        low, high = autoscaling_of(args)
        spot = spec.spot
        cs.AgentPool(
            f"{name}-pool",
            agent_pool_name=spec.name,
            resource_group_name=args["resource_group_name"],
            resource_name_=args["cluster_name"],
            mode="User",
            os_type="Linux",
            os_sku="Ubuntu",
            vm_size=args["vm_size"],
            gpu_profile=cs.GPUProfileArgs(driver=GPU_DRIVER),
            count=low,
            min_count=low,
            max_count=high,
            enable_auto_scaling=True,
            max_pods=aks_machines.MAX_PODS,
            os_disk_size_gb=args.get("disk_size_gb", 200),
            availability_zones=list(args.get("zones") or []) or None,
            vnet_subnet_id=args.get("node_subnet_id"),
            enable_node_public_ip=False,
            orchestrator_version=minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION)),
            scale_set_priority="Spot" if spot else "Regular",
            scale_set_eviction_policy="Delete" if spot else None,
            spot_max_price=SPOT_MAX_PRICE if spot else None,
            node_labels=self.stack_labels(spec),
            node_taints=node_taint_strings(self.stack_taints(spec)),
            tags=dict(args.get("tags") or {}),
            opts=self.child(ignore_changes=["count", *(SPOT_WRITTEN_BY_AKS if spot else [])]),
        )
        self.pool_name = spec.name
        self.scale_set_regex = scale_set_regex(spec.name)

    @classmethod
    def machine_types(cls, args: AksGpuNodePoolArgs) -> list[str]:
        return [str(args.get("vm_size") or "")]

    @classmethod
    def cloud_issues(cls, name: str, args: AksGpuNodePoolArgs) -> Issues:
        issues: Issues = []
        pool = args.get("pool_name") or name
        if not POOL_NAME.fullmatch(pool):
            issues.append(("pool_name", f"the AKS pool name {pool!r} must be 1-12 lowercase letters and digits, "
                                        "starting with a letter"))
        problem = kubernetes_version_problem(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION))
        if problem:
            issues.append(("kubernetes_version", problem))
        for i, zone in enumerate(args.get("zones") or []):
            if zone not in ("1", "2", "3"):
                issues.append((f"zones[{i}]", f"{zone!r} is not an Azure availability zone (\"1\", \"2\" or \"3\")"))
        for key in args.get("labels") or {}:
            if key.startswith(RESERVED_PREFIXES):
                issues.append((f"labels.{key}", "AKS reserves this prefix; it sets those labels itself"))
        for i, taint in enumerate(args.get("taints") or []):
            if str(taint.get("key", "")).startswith(RESERVED_PREFIXES):
                issues.append((f"taints[{i}]", "AKS reserves this prefix; it sets those taints itself"))
        issues += aks_rules.pool_limit_issues(args.get("autoscaling") or {}, "autoscaling.")
        issues += aks_rules.pool_limit_issues({"disk_size_gb": args["disk_size_gb"]} if "disk_size_gb" in args else {})
        if args.get("dra", True):
            issues += dra_pool_issues(args)
        return issues
