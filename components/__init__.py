"""gpu-fungibility components: GPU/TPU clusters where one LLM-serving workload runs on whatever accelerator
is available, through Kubernetes Dynamic Resource Allocation (DRA), on GKE, EKS and AKS.

Installed, this package is ``gpu_fungibility``::

    from gpu_fungibility import GkeGpuNodePool, NvidiaDraDriver

Each component takes a TypedDict of arguments (``GkeNodePoolArgs``, ...) and is
also served to every Pulumi language by the component package in this folder
(``PulumiPlugin.yaml``, ``__main__.py``). The pure modules (``catalog``,
``dra_wiring``, ``clouds``, ``node_selection``, ``helm_values``, ``device_selectors``,
``devices``, ``sizing``)
import no provider SDK; the components are imported on first use.
"""

import importlib
from typing import Any

#: Every public component (and its argument types), by the module that defines it.
COMPONENT_MODULES: dict[str, str] = {
    "GkeNetwork": "gke_network",
    "GkeCluster": "gke_cluster",
    "GkeGpuNodePool": "gke_pools",
    "GkeTpuNodePool": "gke_pools",
    "NvidiaDriverInstaller": "driver_installer",
    "NvidiaDraDriver": "nvidia_dra",
    "TpuDraDriver": "tpu_dra",
    "NvidiaDevicePlugin": "device_plugin",
    "GkeComputeClass": "compute_class",
    "DraClaims": "claims",
    "WorkloadNamespace": "workload",
    "VllmWorkload": "workload",
    "EksNetwork": "eks_network",
    "EksCluster": "eks_cluster",
    "EksGpuNodeGroup": "eks_node_groups",
    "ClusterAutoscaler": "cluster_autoscaler",
    "AksNetwork": "aks_network",
    "AksCluster": "aks_cluster",
    "AksGpuNodePool": "aks_node_pools",
    "AksAutoscalerPriorities": "aks_autoscaler",
}
ARGS_MODULES: dict[str, str] = {
    "GkeNetworkArgs": "gke_network",
    "GkeClusterArgs": "gke_cluster",
    "GkeSystemPool": "gke_cluster",
    "GkeNodePoolArgs": "gke_pools",
    "PoolAutoscaling": "pool_args",
    "Taint": "pool_args",
    "NvidiaDriverInstallerArgs": "driver_installer",
    "NvidiaDraDriverArgs": "nvidia_dra",
    "TpuDraDriverArgs": "tpu_dra",
    "NvidiaDevicePluginArgs": "device_plugin",
    "GkeComputeClassArgs": "compute_class",
    "DraClaimsArgs": "claims",
    "DeviceClaim": "claims",
    "DeviceAlternative": "claims",
    "DeviceClassSpec": "claims",
    "DeviceToleration": "claims",
    "MigDevices": "claims",
    "MigSliceRequest": "claims",
    "WorkloadNamespaceArgs": "workload",
    "VllmWorkloadArgs": "workload",
    "WorkloadClaim": "workload",
    "WorkloadService": "workload",
    "MigServer": "workload",
    "ServingPool": "workload",
    "ServingResources": "workload",
    "EksNetworkArgs": "eks_network",
    "EksClusterArgs": "eks_cluster",
    "EksSystemNodeGroup": "eks_cluster",
    "EksGpuNodeGroupArgs": "eks_node_groups",
    "ClusterAutoscalerArgs": "cluster_autoscaler",
    "AksNetworkArgs": "aks_network",
    "AksClusterArgs": "aks_cluster",
    "AksSystemPool": "aks_cluster",
    "AksGpuNodePoolArgs": "aks_node_pools",
    "AksAutoscalerPrioritiesArgs": "aks_autoscaler",
    "ComponentArgsError": "errors",
    "UnknownCloudError": "errors",
}

__all__ = sorted([*COMPONENT_MODULES, *ARGS_MODULES])


def __getattr__(name: str) -> Any:
    module = COMPONENT_MODULES.get(name) or ARGS_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def components() -> list[type]:
    """Every public component class (imports every provider SDK)."""
    return [__getattr__(name) for name in COMPONENT_MODULES]
