"""Everything that differs between the clouds, in one place per cloud.

A :class:`CloudProfile` answers every cloud-specific question the library, the
stack program, the simulator and the policy pack ask: which labels and taints
the cloud puts on accelerator nodes and which the library must add, how a
LoadBalancer Service is kept internal, how the fallback order is expressed,
whether DRA pools can scale up from zero, which machine shapes carry which
accelerators. :func:`profile` is the only dispatch on a cloud's name, and it
refuses a cloud it does not know, so a new cloud can never silently inherit
another cloud's labels or load-balancer annotations.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import catalog, node_capacity, zones
from . import wiring_keys as w
from .errors import UnknownCloudError
from .node_selection import NodeTaint

if TYPE_CHECKING:
    from .wiring_keys import PoolSpec

Issues = list[tuple[str, str]]
#: ``(millicores, MiB)``
CpuMemory = tuple[int, int]

GKE_LB_TYPE = "networking.gke.io/load-balancer-type"
AWS_LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
AWS_LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
AWS_LB_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"
AZURE_LB_INTERNAL = "service.beta.kubernetes.io/azure-load-balancer-internal"


class CloudProfile:
    """The questions every cloud answers; one subclass per cloud."""

    name: str = ""
    title: str = ""
    #: Accelerator families the cloud offers.
    families: tuple[str, ...] = ()
    #: How the pools' fallback order reaches the autoscaler.
    fallback_mechanism: str = ""
    #: Whether the autoscaler can add the first node of an empty DRA pool for a pending claim.
    dra_scales_from_zero: bool = False
    #: Whether the autoscaler adds nodes to a running DRA GPU pool (below its max) for a pending claim.
    dra_grows_past_min: bool = True
    #: Why it does not, where it does not (shown by the simulator and the config warning).
    dra_growth_limit: str | None = None
    #: Whether pools in a compute class carry the class's node label and taint.
    compute_class_on_nodes: bool = False
    #: Why GPU sharing (MIG partitions, time-sharing, MPS) is refused on this cloud's DRA pools, or None.
    dra_gpu_sharing_refused: str | None = None
    #: Where the NVIDIA driver lives on the host (None: the chart's default root, ``/``).
    nvidia_driver_root: str | None = None
    #: Whether system-node-critical pods outside kube-system need a ResourceQuota admitting them.
    critical_pods_need_quota: bool = False
    #: Whether the NVIDIA DRA driver's namespace gets that ResourceQuota unless told otherwise.
    nvidia_dra_quota_by_default: bool = False
    #: The pool argument naming its machine shape(s): ``machine_type`` or ``instance_types``.
    pool_machine_argument: str = ""
    #: The node label whose value is the name of the node's pool / node group (``make verify`` reads it).
    node_pool_label: str = ""
    #: Whether a GPU pool that opts out of the cloud's own device plugin needs the library's plugins.
    default_device_plugin_opt_out: str | None = None
    #: Room left on every accelerator node for the cloud's own per-node pods (kube-proxy, logging and
    #: metrics agents, CSI and network plugins), as ``(millicores, MiB)``. A margin the library chooses,
    #: not a documented figure: those pods' requests vary with the cluster version and add-ons. It is above
    #: the requests of the non-workload pods measured on real nodes (2i2c-org/infrastructure
    #: node-capacity-info.json, commit 1097ae3c, ``measured_overhead``: kube-system and that operator's own
    #: per-node pods): GKE n2-highmem-4 443m / 596 MiB, EKS r5.xlarge 170m / 250 MiB.
    system_pods_reserve: CpuMemory = (500, 1024)
    #: Seconds between the cloud's spot reclaim notice and the end of the VM (see docs/workloads.md).
    spot_notice_seconds: int = 0
    #: The longest ``terminationGracePeriodSeconds`` a serving pod on a spot node can actually use.
    spot_pod_grace_seconds: int = 0

    #: The kubelet's hard eviction threshold for memory (MiB), subtracted from capacity.
    eviction_hard_mib: int = node_capacity.EVICTION_HARD_MIB

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` a node of this machine reports as its capacity: every vCPU, and the nominal
        memory minus the kernel's share (the kernel's MemTotal).

        A new cloud implements this and :meth:`kube_reserved`, each figure citing the cloud's own source
        or public measurements (``tests/fixtures/node_capacity_measurements.csv``), and erring low where it
        must guess: a capacity above the real one makes pods that never schedule.
        """
        raise NotImplementedError

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` the cloud's kubelet configuration reserves (``kube-reserved`` plus
        ``system-reserved``) on a node of this machine."""
        raise NotImplementedError

    def allocatable(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` a node of this machine offers pods: capacity minus what the cloud reserves
        and the hard eviction threshold."""
        cpu, memory = self.capacity(host)
        reserved_cpu, reserved_memory = self.kube_reserved(host)
        return cpu - reserved_cpu, memory - reserved_memory - self.eviction_hard_mib

    def accelerator_labels(self, family: str, dra: bool) -> dict[str, str]:
        raise NotImplementedError

    def stack_labels(self, pool: "PoolSpec") -> dict[str, str]:
        """Labels the library sets on every node of the pool (the caller's labels last)."""
        labels = dict(self.accelerator_labels(pool.family, pool.dra))
        if pool.compute_class and self.compute_class_on_nodes:
            labels[w.GKE_COMPUTE_CLASS] = pool.compute_class
        if pool.on_demand_fallback:
            labels[w.ON_DEMAND_FALLBACK] = "true"
        labels.update(pool.labels)
        return labels

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        raise NotImplementedError

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        raise NotImplementedError

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        raise NotImplementedError

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        raise NotImplementedError

    def workload_node_selector(self, pools: Sequence["PoolSpec"], compute_class: str | None) -> dict[str, str] | None:
        """The ``nodeSelector`` that steers a workload's pods (and the autoscaler) to its pools."""
        raise NotImplementedError

    def implied_tolerations(self, node_selector: Mapping[str, str]) -> list[dict[str, str]]:
        """Tolerations the cloud adds to a pod by itself (GKE: a selected compute class's taint)."""
        return []

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        """Device plugins the cloud itself runs on such nodes (descriptions; empty: none)."""
        return []

    def library_installs_gpu_driver(self, dra: bool) -> bool:
        """Whether the NVIDIA driver of a GPU pool must be installed by the library (not the cloud)."""
        return False

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        """(errors, warnings) about the stack's zones against the region and the recorded offerings."""
        return [], []

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        """Problems with a pool's machine(s) for its accelerator, as (argument, message)."""
        raise NotImplementedError

    def unrecorded_machine(self, machine: str) -> str | None:
        """Why a machine outside the accelerator catalog (a system pool's) is not one the cloud has, as far as
        recorded, or None (also where nothing is recorded)."""
        return None


class Gke(CloudProfile):
    name, title = "gke", "GKE"
    families = ("gpu", "tpu")
    fallback_mechanism = "ComputeClass priorities"
    dra_scales_from_zero = True  # with cloud.google.com/gke-nvidia-gpu-dra-driver=true on the pool
    dra_gpu_sharing_refused = ("GKE does not support multi-instance GPUs, GPU time-sharing or MPS with DRA "
                               "(GKE 'Prepare GKE infrastructure for DRA workloads', Limitations)")
    compute_class_on_nodes = True
    nvidia_driver_root = "/home/kubernetes/bin/nvidia/"  # where the COS driver installer puts it
    critical_pods_need_quota = True
    nvidia_dra_quota_by_default = False  # seed 000: priorityClassName "" instead
    pool_machine_argument = "machine_type"
    # cloud.google.com/kubernetes-engine/docs/how-to/node-pools (nodeSelector on the node pool label).
    node_pool_label = "cloud.google.com/gke-nodepool"
    default_device_plugin_opt_out = w.GKE_NO_DEFAULT_DEVICE_PLUGIN
    # cloud.google.com/kubernetes-engine/docs/concepts/spot-vms (and /preemptible-vms): a Spot VM is stopped
    # 30 s after the preemption notice; graceful node shutdown gives non-system pods up to 15 s of it
    # (best effort), then 15 s to system-critical pods.
    spot_notice_seconds = 30
    spot_pod_grace_seconds = 15

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # The Cluster Autoscaler's GCE template model of MemTotal on COS (node_capacity.gke_kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - node_capacity.gke_kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # GKE's tiers, of the nominal memory (node_capacity.GKE_MEMORY_TIERS).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return cpu_reserved_millicores(host.vcpus), node_capacity.gke_kube_reserved_mib(nominal)

    def accelerator_labels(self, family: str, dra: bool) -> dict[str, str]:
        if family == "tpu":
            return {w.GKE_TPU_DRA_DRIVER: "true"}
        if not dra:
            return {}  # GKE's own driver and device plugin serve the pool; nothing routes to it
        return {w.GPU_PRESENT: "true", w.GPU_DRA: "true", w.GKE_NO_DEFAULT_DEVICE_PLUGIN: "true",
                w.GKE_GPU_DRA_DRIVER: "true", w.GKE_AUTOSCALER_GPU_DRA: "true"}

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        return [NodeTaint(w.GKE_COMPUTE_CLASS, pool.compute_class, "NoSchedule")] if pool.compute_class else []

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        labels = {w.GKE_NODEPOOL: pool.name}
        if pool.spot:
            labels[w.GKE_SPOT] = "true"
        if pool.family == "gpu":
            labels[w.GKE_ACCELERATOR] = pool.accelerator_type
        else:
            labels[w.GKE_TPU_ACCELERATOR] = pool.accelerator_type
            shape = catalog.gke_machine_shape(pool.machine_type or "")
            topology = pool.topology or (shape.topology if shape else None)
            if topology:
                labels[w.GKE_TPU_TOPOLOGY] = topology
        return labels

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        # GKE taints accelerator nodes in clusters that also have CPU pools.
        key = w.GPU_TAINT_KEY if pool.family == "gpu" else w.TPU_TAINT_KEY
        return [NodeTaint(key, "present", "NoSchedule")]

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        return {} if public else {GKE_LB_TYPE: "Internal"}

    def workload_node_selector(self, pools: Sequence["PoolSpec"], compute_class: str | None) -> dict[str, str] | None:
        if compute_class:
            return {w.GKE_COMPUTE_CLASS: compute_class}
        return {w.GKE_NODEPOOL: pools[0].name} if pools else None

    def implied_tolerations(self, node_selector: Mapping[str, str]) -> list[dict[str, str]]:
        # GKE gives pods that select a compute class the toleration for that class's taint
        # (seed 000's pod tolerates only nvidia.com/gpu and lands on the tainted pools).
        compute_class = node_selector.get(w.GKE_COMPUTE_CLASS)
        if not compute_class:
            return []
        return [{"key": w.GKE_COMPUTE_CLASS, "operator": "Equal", "value": compute_class, "effect": "NoSchedule"}]

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        if family == "gpu" and node_labels.get(w.GKE_NO_DEFAULT_DEVICE_PLUGIN) != "true":
            return [f"GKE's default NVIDIA device plugin (the pool lacks {w.GKE_NO_DEFAULT_DEVICE_PLUGIN}=true)"]
        if family == "tpu" and node_labels.get(w.GKE_TPU_DRA_DRIVER) != "true":
            return [f"GKE's default TPU device plugin (the pool lacks {w.GKE_TPU_DRA_DRIVER}=true)"]
        return []

    def library_installs_gpu_driver(self, dra: bool) -> bool:
        # gpuDriverVersion INSTALLATION_DISABLED on DRA pools: GKE installs neither driver nor device plugin.
        return dra

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        return zones.gce_findings(location, zoned, pools)

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        machine = machine_types[0] if machine_types else ""
        if not machine:
            return [("machine_type", f"required on GKE: {_machines_hint(catalog.GKE_MACHINES, accelerator_type, accelerator_count, catalog.ATTACHABLE_GPUS)}")]
        shape = catalog.gke_machine_shape(machine)
        if shape:
            if shape.accelerator != accelerator_type or shape.count != accelerator_count:
                return [("accelerator", f"{machine} carries {shape.count} x {shape.accelerator}, "
                                        f"not {accelerator_count} x {accelerator_type}; "
                                        f"{_machines_hint(catalog.GKE_MACHINES, accelerator_type, accelerator_count, catalog.ATTACHABLE_GPUS)}")]
            if topology and shape.topology and topology != shape.topology:
                return [("topology", f"{machine} has topology {shape.topology}")]
            return []
        attachable = catalog.gke_attachable(machine)
        if attachable and attachable[0] == accelerator_type:
            if accelerator_count not in attachable[1]:
                return [("accelerator_count", f"{accelerator_type} attaches in counts of {attachable[1]}")]
            return []
        known = catalog.natural_sorted(s for s, m in catalog.GKE_MACHINES.items() if m.accelerator == accelerator_type)
        hint = (f"machine types for {accelerator_type}: {', '.join(known)}" if known
                else "see the accelerator catalog")
        return [("machine_type", f"{machine!r} is not a known machine for {accelerator_type}; {hint}")]


class Eks(CloudProfile):
    name, title = "eks", "EKS"
    families = ("gpu",)
    fallback_mechanism = "Cluster Autoscaler priority expander"
    # The upstream autoscaler cannot describe the DRA devices of a node group with no nodes on AWS.
    dra_scales_from_zero = False
    compute_class_on_nodes = False
    nvidia_driver_root = None  # the AL2023 NVIDIA AMI has the driver on the host
    critical_pods_need_quota = False
    nvidia_dra_quota_by_default = True  # seed 004 creates the quota on EKS
    pool_machine_argument = "instance_types"
    # docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html: managed node groups label their nodes.
    node_pool_label = "eks.amazonaws.com/nodegroup"
    # docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html: a two-minute
    # interruption notice. The node group drains the node after the notice reaches the cluster; 30 s of the
    # two minutes are left for that and for the node's own shutdown.
    spot_notice_seconds = 120
    spot_pod_grace_seconds = 90
    #: Pods per node when the catalog does not know the instance (Kubernetes' default maxPods).
    DEFAULT_MAX_PODS = 110

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # A share fitted below public measurements (node_capacity.eks_kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - node_capacity.eks_kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # AL2023 nodeadm: 11 MiB x maxPods + 255 MiB (node_capacity.eks_kube_reserved_mib). maxPods is the
        # VPC CNI's ENI figure nodeadm computes; a lower maxPods (a kubelet override, a cap) reserves less,
        # so the estimate then errs low.
        max_pods = host.max_pods or self.DEFAULT_MAX_PODS
        return cpu_reserved_millicores(host.vcpus), node_capacity.eks_kube_reserved_mib(max_pods)

    #: EKS AMI types whose nodes run the NVIDIA device plugin as a host service.
    AMIS_WITH_DEVICE_PLUGIN = ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA")

    def accelerator_labels(self, family: str, dra: bool) -> dict[str, str]:
        if family != "gpu":
            return {}
        return {w.GPU_PRESENT: "true", w.GPU_DRA: "true"} if dra else {w.GPU_PRESENT: "true"}

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        return [NodeTaint(w.GPU_TAINT_KEY, "true", "NoSchedule")] if pool.family == "gpu" else []

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        return {w.EKS_NODEGROUP: pool.name, w.EKS_CAPACITY_TYPE: "SPOT" if pool.spot else "ON_DEMAND"}

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        return []

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        # ``aws-load-balancer-type``/``-scheme`` are read by the AWS Load Balancer Controller,
        # ``aws-load-balancer-internal`` by the cloud provider's own service controller.
        if public:
            return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internet-facing"}
        return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internal", AWS_LB_INTERNAL: "true"}

    def workload_node_selector(self, pools: Sequence["PoolSpec"], compute_class: str | None) -> dict[str, str] | None:
        # The labels the library sets on every pool the claim can use (nvidia.com/gpu.dra=true and the
        # caller's shared labels) keep pods and the Cluster Autoscaler off CPU and device-plugin groups.
        if not pools:
            return None
        common = self.stack_labels(pools[0])
        for pool in pools[1:]:
            labels = self.stack_labels(pool)
            common = {k: v for k, v in common.items() if labels.get(k) == v}
        return common or None

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        if family == "gpu" and image_type in self.AMIS_WITH_DEVICE_PLUGIN:
            return [f"the NVIDIA device plugin built into {image_type} nodes"]
        return []

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        return zones.ec2_findings(location, zoned, pools)

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        if family not in self.families:
            return [("accelerator_type", "TPUs are only available on GKE")]
        if not machine_types:
            return [("instance_types", "required on EKS: one or more instance types; "
                                       f"{_machines_hint(catalog.EKS_INSTANCES, accelerator_type, accelerator_count)}")]
        issues: Issues = []
        for i, itype in enumerate(machine_types):
            shape = catalog.eks_instance_shape(itype)
            if shape is None:
                known = catalog.natural_sorted(s for s, m in catalog.EKS_INSTANCES.items() if m.accelerator == accelerator_type)
                issues.append((f"instance_types[{i}]", f"unknown GPU instance type {itype!r}; for "
                                                       f"{accelerator_type}: {', '.join(known) or 'none'}"))
            elif shape.accelerator != accelerator_type or shape.count != accelerator_count:
                issues.append((f"instance_types[{i}]",
                               f"{itype} carries {shape.count} x {shape.accelerator}, but the pool declares "
                               f"{accelerator_count} x {accelerator_type}; all instance types of a group must match; "
                               f"{_machines_hint(catalog.EKS_INSTANCES, accelerator_type, accelerator_count)}"))
        return issues


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

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # The kernel's share fitted below AKS measurements (node_capacity.aks_kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - node_capacity.aks_kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # AKS 1.29+: CPU by cores, memory min(20 MiB x maxPods + 50 MiB, 25%) (node_capacity, AKS section);
        # the 100 MiB memory.available hard eviction threshold is the base class's.
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        max_pods = host.max_pods or catalog.AKS_MAX_PODS
        return (node_capacity.aks_cpu_reserved_millicores(host.vcpus),
                node_capacity.aks_kube_reserved_mib(nominal, max_pods))

    def accelerator_labels(self, family: str, dra: bool) -> dict[str, str]:
        return Eks.accelerator_labels(self, family, dra)

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

    workload_node_selector = Eks.workload_node_selector

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
        return zones.azure_findings(location)

    def unrecorded_machine(self, machine: str) -> str | None:
        from .azure_vm_sizes import AZURE_VM_SIZES

        if machine in AZURE_VM_SIZES:
            return None
        import difflib

        near = difflib.get_close_matches(machine, sorted(AZURE_VM_SIZES), n=3, cutoff=0.8)
        hint = f"; close: {', '.join(near)}" if near else ""
        return (f"{machine} is not an Azure VM size as recorded (the Cluster Autoscaler's table of Azure's Resource "
                f"SKUs, gpu_fungibility.azure_vm_sizes){hint}; AKS refuses a size the region does not offer, and "
                "`make preflight` reads the region's list")

    #: How a pool that asks AKS for its managed GPU stack is marked (``Pool.ami_type`` in the policy pack).
    MANAGED_GPU_STACK = "aks-managed-gpu"

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        if family not in self.families:
            return [("accelerator_type", "TPUs are only available on GKE")]
        vm_size = machine_types[0] if machine_types else ""
        if not vm_size:
            return [("vm_size", f"required on AKS: {_machines_hint(catalog.AKS_VM_SIZES, accelerator_type, accelerator_count)}")]
        shape = catalog.aks_vm_size_shape(vm_size)
        if shape is None:
            known = catalog.natural_sorted(s for s, m in catalog.AKS_VM_SIZES.items() if m.accelerator == accelerator_type)
            return [("vm_size", f"unknown GPU VM size {vm_size!r}; for {accelerator_type}: {', '.join(known) or 'none'}")]
        if shape.accelerator != accelerator_type or shape.count != accelerator_count:
            return [("accelerator", f"{vm_size} carries {shape.count} x {shape.accelerator}, "
                                    f"not {accelerator_count} x {accelerator_type}; "
                                    f"{_machines_hint(catalog.AKS_VM_SIZES, accelerator_type, accelerator_count)}")]
        return []


def _machines_hint(shapes: Mapping[str, catalog.MachineShape], accelerator_type: str, count: int,
                   attachable: Mapping[str, tuple[str, tuple[int, ...]]] | None = None) -> str:
    """Which machines of the catalog fit: those with ``count`` x ``accelerator_type``, else any count of it."""
    exact = catalog.machines_for(shapes, accelerator_type, count, attachable)
    if exact:
        return f"machines with {count} x {accelerator_type}: {', '.join(exact)}"
    other = catalog.machines_for(shapes, accelerator_type, None, attachable)
    if other:
        counts = sorted({s.count for s in shapes.values() if s.accelerator == accelerator_type})
        return (f"no machine carries {count} x {accelerator_type}; machines for {accelerator_type} "
                f"(counts {', '.join(map(str, counts))}): {', '.join(other)}")
    return f"no machine of this cloud in the catalog carries {accelerator_type} (docs/machines.md lists them)"


#: The kubelet's hard eviction threshold for memory on every cloud (see node_capacity).
EVICTION_HARD_MIB = node_capacity.EVICTION_HARD_MIB
cpu_reserved_millicores = node_capacity.cpu_reserved_millicores


PROFILES: dict[str, CloudProfile] = {p.name: p for p in (Gke(), Eks(), Aks())}
CLOUDS = tuple(PROFILES)


def profile(cloud: "str | CloudProfile | Any") -> CloudProfile:
    """The profile of a cloud (``"gke"``, ``"eks"``, ``"aks"``); any other name raises :class:`UnknownCloudError`."""
    if isinstance(cloud, CloudProfile):
        return cloud
    found = PROFILES.get(str(getattr(cloud, "value", cloud)))
    if found is None:
        raise UnknownCloudError(cloud, CLOUDS)
    return found
