"""GKE: Google Kubernetes Engine's profile (GPU and TPU pools, ComputeClass fallback)."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ... import catalog, node_capacity, zones
from ... import wiring_keys as w
from ...node_selection import NodeTaint
from .. import CloudProfile, CpuMemory, Issues, cpu_reserved_millicores, machines_hint, register
from . import calendar as calendar_rows
from . import capacity as capacity_model
from . import machines as machine_table
from . import regions as zone_data

if TYPE_CHECKING:
    from ...wiring_keys import PoolSpec

GKE_LB_TYPE = "networking.gke.io/load-balancer-type"


class Gke(CloudProfile):
    name, title = "gke", "GKE"
    families = ("gpu", "tpu")
    fallback_mechanism = "ComputeClass priorities"
    dra_scales_from_zero = True  # with cloud.google.com/gke-nvidia-gpu-dra-driver=true on the pool
    dra_gpu_sharing_refused = ("GKE does not support multi-instance GPUs, GPU time-sharing or MPS with DRA "
                               "(GKE 'Prepare GKE infrastructure for DRA workloads', Limitations)")
    compute_class_on_nodes = True
    compute_class_label = w.GKE_COMPUTE_CLASS
    nvidia_driver_root = "/home/kubernetes/bin/nvidia/"  # where the COS driver installer puts it
    critical_pods_need_quota = True
    nvidia_dra_quota_by_default = False  # seed 000: priorityClassName "" instead
    pool_machine_argument = "machine_type"
    # cloud.google.com/kubernetes-engine/docs/how-to/node-pools (nodeSelector on the node pool label).
    node_pool_label = "cloud.google.com/gke-nodepool"
    cluster_type, pool_type = "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool"
    default_device_plugin_opt_out = w.GKE_NO_DEFAULT_DEVICE_PLUGIN
    # cloud.google.com/kubernetes-engine/docs/concepts/spot-vms (and /preemptible-vms): a Spot VM is stopped
    # 30 s after the preemption notice; graceful node shutdown gives non-system pods up to 15 s of it
    # (best effort), then 15 s to system-critical pods.
    spot_notice_seconds = 30
    spot_pod_grace_seconds = 15
    machines = machine_table.MACHINES
    attachable_gpus = machine_table.ATTACHABLE_GPUS
    support_calendar = calendar_rows.CALENDAR
    channel_default_minor = calendar_rows.CHANNEL_DEFAULT_MINOR
    library_components = {"GkeNetwork": "clouds.gke.network", "GkeCluster": "clouds.gke.cluster",
                          "GkeGpuNodePool": "clouds.gke.pools", "GkeTpuNodePool": "clouds.gke.pools",
                          "GkeComputeClass": "clouds.gke.compute_class",
                          "NvidiaDriverInstaller": "clouds.gke.driver_installer"}
    library_args = {"GkeNetworkArgs": "clouds.gke.network", "GkeClusterArgs": "clouds.gke.cluster",
                    "GkeSystemPool": "clouds.gke.cluster", "GkeNodePoolArgs": "clouds.gke.pools",
                    "GkeComputeClassArgs": "clouds.gke.compute_class",
                    "NvidiaDriverInstallerArgs": "clouds.gke.driver_installer"}

    def host_shape(self, machine: str) -> catalog.HostShape | None:
        # The accelerator machines, and the N1 machines of system pools and attached GPUs.
        return super().host_shape(machine) or machine_table.n1_host_shape(machine)

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # The Cluster Autoscaler's GCE template model of MemTotal on COS (capacity.kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - capacity_model.kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # GKE's tiers, of the nominal memory (capacity.GKE_MEMORY_TIERS).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return cpu_reserved_millicores(host.vcpus), capacity_model.kube_reserved_mib(nominal)

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
            shape = self.machine_shape(pool.machine_type or "")
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
        return zone_data.gce_findings(location, zoned, pools)

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        machine = machine_types[0] if machine_types else ""
        if not machine:
            return [("machine_type", f"required on GKE: {machines_hint(self.machines, accelerator_type, accelerator_count, self.attachable_gpus)}")]
        shape = self.machine_shape(machine)
        if shape:
            if shape.accelerator != accelerator_type or shape.count != accelerator_count:
                return [("accelerator", f"{machine} carries {shape.count} x {shape.accelerator}, "
                                        f"not {accelerator_count} x {accelerator_type}; "
                                        f"{machines_hint(self.machines, accelerator_type, accelerator_count, self.attachable_gpus)}")]
            if topology and shape.topology and topology != shape.topology:
                return [("topology", f"{machine} has topology {shape.topology}")]
            return []
        attachable = self.attachable(machine)
        if attachable and attachable[0] == accelerator_type:
            if accelerator_count not in attachable[1]:
                return [("accelerator_count", f"{accelerator_type} attaches in counts of {attachable[1]}")]
            return []
        known = catalog.natural_sorted(s for s, m in self.machines.items() if m.accelerator == accelerator_type)
        hint = (f"machine types for {accelerator_type}: {', '.join(known)}" if known
                else "see the accelerator catalog")
        return [("machine_type", f"{machine!r} is not a known machine for {accelerator_type}; {hint}")]


PROFILE = register(Gke())
