"""AKS: Azure Kubernetes Service's profile (agent pools, priority expander)."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ... import catalog, node_capacity, zones
from ... import wiring_keys as w
from ...node_selection import NodeTaint
from .. import CloudProfile, CpuMemory, Issues, machines_hint, register
from . import calendar as calendar_rows
from . import capacity as capacity_model
from . import machines as machine_table
from . import regions as zone_data

if TYPE_CHECKING:
    from ...wiring_keys import PoolSpec

AZURE_LB_INTERNAL = "service.beta.kubernetes.io/azure-load-balancer-internal"


class Aks(CloudProfile):
    name, title = "aks", "AKS"
    families = ("gpu",)
    fallback_mechanism = "managed cluster autoscaler, priority expander"
    #: The managed autoscaler builds an empty pool's node template from the VM SKU and the scale set's tags
    #: (kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure/azure_template.go, buildNodeFromTemplate:
    #: CPU, memory and nvidia.com/gpu; no ResourceSlices), so it cannot see DRA devices on an empty pool.
    #: AKS documents nothing else: DRA pools keep min >= 1 (warned, as on EKS).
    dra_scales_from_zero = False
    #: AKS labels its GPU nodes kubernetes.azure.com/accelerator, the Azure provider's GPU label, and the
    #: autoscaler marks a node carrying that label without nvidia.com/gpu "resource unready"
    #: (kubernetes/autoscaler cluster-autoscaler/processors/customresources/gpu_processor.go at
    #: cluster-autoscaler-1.35.2; the Azure provider has no DRA exemption): it waits for the node instead of
    #: adding another, so a DRA pool is modelled at minCount.
    dra_grows_past_min = False
    dra_growth_limit = ("AKS's autoscaler counts a DRA GPU node as resource unready (no nvidia.com/gpu), so it "
                        "does not grow a DRA pool past minCount")
    compute_class_on_nodes = False
    #: AKS installs the driver on the host of a GPU pool unless ``gpuProfile.driver: None``
    #: (learn.microsoft.com/azure/aks/use-nvidia-gpu); NVIDIA documents the GPU Operator on AKS with the
    #: host's driver and the default driver root (docs.nvidia.com/datacenter/cloud-native/gpu-operator/
    #: latest/microsoft-aks.html). The NVIDIA DRA driver keeps its default root, ``/``.
    nvidia_driver_root = None
    critical_pods_need_quota = False
    #: AKS documents no admission limit on system-node-critical pods; the quota is kept as on EKS (harmless).
    nvidia_dra_quota_by_default = True
    pool_machine_argument = "vm_size"
    #: learn.microsoft.com/azure/virtual-machines/spot-vms: Azure gives a Spot VM at least 30 s of notice
    #: (Scheduled Events, "Preempt"); as on GKE, 15 s of it are left to serving pods.
    spot_notice_seconds = 30
    spot_pod_grace_seconds = 15
    #: The label that names a node's pool (learn.microsoft.com/azure/aks/use-labels, reserved labels).
    node_pool_label = w.AKS_AGENTPOOL
    cluster_type = "azure-native:containerservice:ManagedCluster"
    pool_type = "azure-native:containerservice:AgentPool"
    machines = machine_table.MACHINES
    support_calendar = calendar_rows.CALENDAR
    library_components = {"AksNetwork": "clouds.aks.network", "AksCluster": "clouds.aks.cluster",
                          "AksGpuNodePool": "clouds.aks.node_pools", "AksAutoscalerPriorities": "clouds.aks.autoscaler"}
    library_args = {"AksNetworkArgs": "clouds.aks.network", "AksClusterArgs": "clouds.aks.cluster",
                    "AksSystemPool": "clouds.aks.cluster", "AksGpuNodePoolArgs": "clouds.aks.node_pools",
                    "AksAutoscalerPrioritiesArgs": "clouds.aks.autoscaler"}

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # The kernel's share fitted below AKS measurements (capacity.kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - capacity_model.kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # AKS 1.29+: CPU by cores, memory min(20 MiB x maxPods + 50 MiB, 25%) (capacity.py);
        # the 100 MiB memory.available hard eviction threshold is the base class's.
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        max_pods = host.max_pods or machine_table.MAX_PODS
        return (capacity_model.cpu_reserved_millicores(host.vcpus),
                capacity_model.kube_reserved_mib(nominal, max_pods))

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        # AKS does not taint GPU nodes (learn.microsoft.com/azure/aks/use-nvidia-gpu suggests a taint); the
        # library taints them as on EKS, so only pods that tolerate GPUs land there.
        return [NodeTaint(w.GPU_TAINT_KEY, "true", "NoSchedule")] if pool.family == "gpu" else []

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        labels = {w.AKS_AGENTPOOL: pool.name}
        if pool.spot:
            labels[w.AKS_SCALESET_PRIORITY] = "spot"
        if pool.family == "gpu":
            labels[w.AKS_ACCELERATOR] = "nvidia"
        return labels

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        # learn.microsoft.com/azure/aks/spot-node-pool: AKS taints every Spot node.
        return [NodeTaint(w.AKS_SCALESET_PRIORITY, "spot", "NoSchedule")] if pool.spot else []

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        # learn.microsoft.com/azure/aks/internal-lb: the Azure cloud provider builds an internal load balancer
        # for a Service annotated service.beta.kubernetes.io/azure-load-balancer-internal: "true".
        return {} if public else {AZURE_LB_INTERNAL: "true"}

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        # AKS installs the driver but runs no device plugin on a GPU pool (learn.microsoft.com/azure/aks/
        # use-nvidia-gpu: the plugin is the user's to install) unless the pool is a managed GPU pool
        # (gpuProfile.nvidia.managementMode: Managed, preview), which the library never sets.
        if family == "gpu" and image_type == self.MANAGED_GPU_STACK:
            return ["the NVIDIA device plugin of AKS's managed GPU node pools"]
        return []

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        return zone_data.azure_findings(location)

    def unrecorded_machine(self, machine: str) -> str | None:
        from .vm_sizes import AZURE_VM_SIZES

        if machine in AZURE_VM_SIZES:
            return None
        import difflib

        near = difflib.get_close_matches(machine, sorted(AZURE_VM_SIZES), n=3, cutoff=0.8)
        hint = f"; close: {', '.join(near)}" if near else ""
        return (f"{machine} is not an Azure VM size as recorded (the Cluster Autoscaler's table of Azure's Resource "
                f"SKUs, gpu_fungibility.clouds.aks.vm_sizes){hint}; AKS refuses a size the region does not offer, and "
                "`make preflight` reads the region's list")

    #: How a pool that asks AKS for its managed GPU stack is marked (``Pool.ami_type`` in the policy pack).
    MANAGED_GPU_STACK = "aks-managed-gpu"

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        if family not in self.families:
            return [("accelerator_type", "TPUs are only available on GKE")]
        vm_size = machine_types[0] if machine_types else ""
        if not vm_size:
            return [("vm_size", f"required on AKS: {machines_hint(self.machines, accelerator_type, accelerator_count)}")]
        shape = self.machine_shape(vm_size)
        if shape is None:
            known = catalog.natural_sorted(s for s, m in self.machines.items() if m.accelerator == accelerator_type)
            return [("vm_size", f"unknown GPU VM size {vm_size!r}; for {accelerator_type}: {', '.join(known) or 'none'}")]
        if shape.accelerator != accelerator_type or shape.count != accelerator_count:
            return [("accelerator", f"{vm_size} carries {shape.count} x {shape.accelerator}, "
                                    f"not {accelerator_count} x {accelerator_type}; "
                                    f"{machines_hint(self.machines, accelerator_type, accelerator_count)}")]
        return []


PROFILE = register(Aks())
