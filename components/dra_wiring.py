"""The DRA wiring of a pool: the labels and taints that decide which plugin runs where.

One pure module, so the node pool components, the DRA driver values, the
simulator and the tests all read the same facts. It covers both what the stack
sets on a pool and what the cloud adds to every node of it (GKE taints GPU
nodes with ``nvidia.com/gpu=present:NoSchedule`` and labels them with the
accelerator; TPU nodes likewise with ``google.com/tpu``).
"""

from __future__ import annotations

from dataclasses import dataclass

from stacks.config import NodePool, StackConfig

# Labels that route the plugins.
GPU_PRESENT = "nvidia.com/gpu.present"
GPU_DRA = "nvidia.com/gpu.dra"
GKE_NO_DEFAULT_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"
GKE_GPU_DRA_DRIVER = "cloud.google.com/gke-nvidia-gpu-dra-driver"
GKE_TPU_DRA_DRIVER = "cloud.google.com/gke-tpu-dra-driver"
GKE_COMPUTE_CLASS = "cloud.google.com/compute-class"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
GKE_TPU_ACCELERATOR = "cloud.google.com/gke-tpu-accelerator"
GKE_TPU_TOPOLOGY = "cloud.google.com/gke-tpu-topology"
GKE_NODEPOOL = "cloud.google.com/gke-nodepool"
GKE_SPOT = "cloud.google.com/gke-spot"
EKS_NODEGROUP = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE = "eks.amazonaws.com/capacityType"
ON_DEMAND_FALLBACK = "gpu-fungibility/on-demand-fallback"  # marks a deliberate on-demand pool

GPU_TAINT_KEY = "nvidia.com/gpu"
TPU_TAINT_KEY = "google.com/tpu"


@dataclass(frozen=True)
class NodeTaint:
    key: str
    value: str
    effect: str  # Kubernetes spelling: NoSchedule, PreferNoSchedule, NoExecute


def pool_labels(cfg: StackConfig, pool_name: str) -> dict[str, str]:
    """Labels the stack sets on every node of the pool (user labels included)."""
    pool = cfg.node_pools[pool_name]
    labels: dict[str, str] = {}
    if pool.family == "gpu":
        labels[GPU_PRESENT] = "true"
        if pool.dra:
            labels[GPU_DRA] = "true"
            if cfg.cluster.cloud == "gke":
                labels[GKE_NO_DEFAULT_DEVICE_PLUGIN] = "true"
                labels[GKE_GPU_DRA_DRIVER] = "true"
        elif cfg.cluster.cloud == "gke":
            # GKE's own driver and device plugin serve this pool; nothing routes to it.
            del labels[GPU_PRESENT]
    else:
        labels[GKE_TPU_DRA_DRIVER] = "true"
    compute_class = cfg.compute_class_of(pool_name)
    if compute_class and cfg.cluster.cloud == "gke":
        labels[GKE_COMPUTE_CLASS] = compute_class
    if pool.on_demand_fallback:
        labels[ON_DEMAND_FALLBACK] = "true"
    labels.update(pool.labels)
    return labels


def pool_taints(cfg: StackConfig, pool_name: str) -> list[NodeTaint]:
    """Taints the stack sets on the pool (user taints included)."""
    pool = cfg.node_pools[pool_name]
    taints: list[NodeTaint] = []
    compute_class = cfg.compute_class_of(pool_name)
    if compute_class and cfg.cluster.cloud == "gke":
        taints.append(NodeTaint(GKE_COMPUTE_CLASS, compute_class, "NoSchedule"))
    if cfg.cluster.cloud == "eks" and pool.family == "gpu":
        taints.append(NodeTaint(GPU_TAINT_KEY, "true", "NoSchedule"))
    taints.extend(NodeTaint(t.key, t.value, t.effect) for t in pool.taints)
    return taints


def eks_node_group_name(cluster_name: str, pool_name: str) -> str:
    """The EKS node group name of a pool: deterministic, so ASG names and priorities are predictable."""
    return f"{cluster_name}-{pool_name}"


def cloud_added_labels(cfg: StackConfig, pool_name: str) -> dict[str, str]:
    """Labels the cloud puts on every node of the pool, whatever the stack says."""
    from components import catalog

    cloud = cfg.cluster.cloud
    pool = cfg.node_pools[pool_name]
    if cloud == "eks":
        return {EKS_NODEGROUP: eks_node_group_name(cfg.cluster.name, pool_name), EKS_CAPACITY_TYPE: "SPOT" if pool.spot else "ON_DEMAND"}
    labels = {GKE_NODEPOOL: pool_name}
    if pool.spot:
        labels[GKE_SPOT] = "true"
    if pool.family == "gpu":
        labels[GKE_ACCELERATOR] = pool.accelerator.type
    else:
        labels[GKE_TPU_ACCELERATOR] = pool.accelerator.type
        shape = catalog.gke_machine_shape(pool.machine_type or "")
        topology = pool.accelerator.topology or (shape.topology if shape else None)
        if topology:
            labels[GKE_TPU_TOPOLOGY] = topology
    return labels


def cloud_added_taints(cloud: str, pool: NodePool) -> list[NodeTaint]:
    """Taints GKE adds to accelerator nodes (in clusters that also have CPU pools)."""
    if cloud != "gke":
        return []
    if pool.family == "gpu":
        return [NodeTaint(GPU_TAINT_KEY, "present", "NoSchedule")]
    return [NodeTaint(TPU_TAINT_KEY, "present", "NoSchedule")]


def node_labels(cfg: StackConfig, pool_name: str) -> dict[str, str]:
    """Every label a node of the pool ends up with."""
    return {**cloud_added_labels(cfg, pool_name), **pool_labels(cfg, pool_name)}


def node_taints(cfg: StackConfig, pool_name: str) -> list[NodeTaint]:
    """Every taint a node of the pool ends up with."""
    pool = cfg.node_pools[pool_name]
    return [*pool_taints(cfg, pool_name), *cloud_added_taints(cfg.cluster.cloud, pool)]
