"""gpu-fungibility components: GPU/TPU clusters where one LLM-serving workload runs on whatever accelerator
is available, through Kubernetes Dynamic Resource Allocation (DRA), on GKE, EKS and AKS.

Installed, this package is ``gpu_fungibility``::

    from gpu_fungibility import GkeGpuNodePool, NvidiaDraDriver

Each component takes a TypedDict of arguments (``GkeNodePoolArgs``, ...) and is
also served to every Pulumi language by the component package in this folder
(``PulumiPlugin.yaml``, ``__main__.py``). The pure modules (``catalog``,
``dra_wiring``, ``clouds``, ``node_selection``, ``helm_values``, ``device_selectors``,
``devices``, ``sizing``)
import no provider SDK; the components are imported on first use, and import their cloud's SDK only when they
build (checking their arguments needs none). The components that build one cloud's
resources are declared by that cloud's profile (``clouds/<cloud>/``); the rest are listed here.
"""

import importlib
from typing import Any

#: Every public component that belongs to no one cloud, by the module that defines it. Each cloud's own
#: components are declared by its profile (``library_components``, in ``clouds/<cloud>/``).
SHARED_COMPONENTS: dict[str, str] = {
    "NvidiaDraDriver": "nvidia_dra",
    "TpuDraDriver": "tpu_dra",
    "NvidiaDevicePlugin": "device_plugin",
    "DraClaims": "claims",
    "WorkloadNamespace": "workload",
    "VllmWorkload": "workload",
}
#: The argument types and errors that belong to no one cloud (each cloud's: its profile's ``library_args``).
SHARED_ARGS: dict[str, str] = {
    "PoolAutoscaling": "pool_args",
    "Taint": "pool_args",
    "NvidiaDraDriverArgs": "nvidia_dra",
    "TpuDraDriverArgs": "tpu_dra",
    "NvidiaDevicePluginArgs": "device_plugin",
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
    "ComponentArgsError": "errors",
    "UnknownCloudError": "errors",
}


def _registered(table: str) -> dict[str, str]:
    """One table of every registered cloud (none while the registry itself is being imported)."""
    clouds = importlib.import_module(f"{__name__}.clouds")
    found: dict[str, str] = {}
    if hasattr(clouds, "SHIPPED_CLOUDS"):
        for name in clouds.names():
            found.update(getattr(clouds.profile(name), table))
    return found


def component_modules() -> dict[str, str]:
    """Every public component, by the module that defines it: the shared ones, then each registered cloud's.

    The order is the schema's: Pulumi's analyzer types a shared argument type (``Taint``) where it first meets
    it, and the shared components take it as an input (``pulumi.Input[list[Taint]]``), so its fields stay
    inputs in every language's SDK.
    """
    return {**SHARED_COMPONENTS, **_registered("library_components")}


def args_modules() -> dict[str, str]:
    """Every public argument type (and the library's errors), by the module that defines it."""
    return {**_registered("library_args"), **SHARED_ARGS}


def __getattr__(name: str) -> Any:
    if name == "__all__":  # read when asked: a cloud may register after this package is imported
        return sorted([*component_modules(), *args_modules()])
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = component_modules().get(name) or args_modules().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})


def components() -> list[type]:
    """Every public component class (importing no cloud SDK until one builds or Pulumi's analyzer reads it)."""
    return [__getattr__(name) for name in component_modules()]
