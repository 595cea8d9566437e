"""The config reference table, generated from the models so docs and code cannot disagree.

``python -m stacks.reference`` prints the Markdown table the README embeds;
a test checks the README carries exactly this text.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from gpu_fungibility import clouds
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from stacks.config import HelmChart, StackConfig


def _registered_clouds() -> str:
    """The registered clouds as the meaning column lists them (`` `gke`, `eks` or `aks` ``), read when the
    table is made."""
    quoted = [f"`{name}`" for name in clouds.names()]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


DESCRIPTIONS = {
    "cluster": "the cluster itself",
    "cluster.name": "cluster name (DNS label)",
    "cluster.location": "GKE region or zone / AWS region / Azure region",
    "cluster.zones": "zones for nodes (GKE node locations / EKS subnets / AKS zones `\"1\"`-`\"3\"`)",
    "cluster.resourceGroup": "AKS: an existing resource group (default: `<name>-rg` is built)",
    "cluster.kubernetesVersion": "control-plane version, >= 1.34 (DRA GA), quoted (`\"1.35\"`: unquoted YAML reads "
                                 "a number); a minor no cloud offers yet (`\"1.40\"`) is refused",
    "cluster.releaseChannel": "GKE release channel; the cluster runs at least the channel's default minor, "
                              "which every tool models (`support_calendar.effective_minor`)",
    "cluster.eksSupportType": "EKS `upgradePolicy.supportType`: `STANDARD` (upgraded at end of standard "
                              "support) or `EXTENDED` ($0.60 instead of $0.10 per cluster hour)",
    "cluster.privateNodes": "nodes without public IPs (GKE; EKS nodes are always in private subnets)",
    "cluster.controlPlane.publicEndpoint": "expose the API endpoint publicly (needs `authorizedNetworks`)",
    "cluster.controlPlane.authorizedNetworks": "CIDR blocks allowed to reach the IP endpoint",
    "cluster.controlPlane.dnsEndpoint": "GKE: `pulumi up` and the kubeconfig use the IAM-authorized DNS endpoint; "
                                        "`false`: the IP endpoint",
    "cluster.controlPlane.runnerCidrs": "where `pulumi up` runs, needed for a private IP endpoint (GKE: "
                                        "authorized; EKS: 443 opened, in the VPC or a connected network; refused on AKS: the "
                                        "policy's `runnerCidrs` config)",
    "cluster.network.cidr": "VPC (EKS) / node subnet (GKE) range, /20 or larger",
    "cluster.network.podsCidr": "GKE: Pod IP range (subnet secondary range), disjoint from `cidr`",
    "cluster.network.servicesCidr": "GKE: Service IP range (subnet secondary range), disjoint from `cidr`",
    "cluster.network.natGatewayPerZone": "EKS: one NAT gateway per zone instead of one shared",
    "cluster.controlPlane.adminPrincipals": "EKS: IAM ARNs granted cluster admin (default: the deploying identity)",
    "cluster.network.existingSubnetIds": "EKS: reuse these subnets instead of building a VPC",
    "cluster.network.existingSubnetId": "AKS: the nodes' subnet, by resource id, instead of building a VNet",
    "cluster.controlPlane.adminGroupObjectIds": "AKS: Microsoft Entra group object ids given cluster-admin",
    "cluster.network.existingNetwork": "GKE: reuse this VPC network",
    "cluster.network.existingSubnetwork": "GKE: reuse this subnetwork",
    "cluster.systemPool.machineType": "GKE machine type of the CPU system pool",
    "cluster.systemPool.instanceTypes": "EKS instance types of the CPU system node group",
    "cluster.systemPool.vmSize": "AKS VM size of the system pool",
    "cluster.systemPool.min": "system pool minimum nodes",
    "cluster.systemPool.max": "system pool maximum nodes",
    "cluster.systemPool.diskSizeGb": "system pool boot disk",
    "cluster.deletionProtection": "refuse to delete the cluster",
    "cluster.labels": "cloud labels/tags on the cluster",
    "nodePools.<pool>.machineType": "GKE machine type (checked against the accelerator catalog)",
    "nodePools.<pool>.instanceTypes": "EKS instance types; all must carry the same GPU model and count",
    "nodePools.<pool>.vmSize": "AKS VM size (checked against the accelerator catalog); AKS pool names: 1-12 lowercase letters and digits",
    "nodePools.<pool>.accelerator.type": "catalog accelerator type (`nvidia-a100-80gb`, `tpu-v6e-slice`, ...)",
    "nodePools.<pool>.accelerator.count": "devices per node",
    "nodePools.<pool>.accelerator.topology": "TPU topology (default: the machine's single-host topology)",
    "nodePools.<pool>.spot": "spot/preemptible capacity",
    "nodePools.<pool>.onDemandFallback": "marks a deliberate on-demand pool (needs `spot: false`)",
    "nodePools.<pool>.dra": "DRA pool; `false` = classic device-plugin GPU pool",
    "nodePools.<pool>.autoscaling.min": "minimum nodes",
    "nodePools.<pool>.autoscaling.max": "maximum nodes (>= min)",
    "nodePools.<pool>.diskSizeGb": "boot disk size, at least 50 GB",
    "nodePools.<pool>.zones": "subset of `cluster.zones` for this pool",
    "nodePools.<pool>.labels": "extra node labels",
    "nodePools.<pool>.taints": "extra node taints (`key`, `value`, `effect`)",
    "computeClasses.<class>.pools": "pools in priority order (1 to 8); also the claim's `firstAvailable` order",
    "computeClasses.<class>.consolidationDelayMinutes": "GKE ComputeClass consolidation delay",
    "computeClasses.<class>.whenUnsatisfiable": "GKE: `ScaleUpAnyway` or `DoNotScaleUp`",
    "computeClasses.<class>.activeMigration.optimizeRulePriority": "GKE: move pods back to preferred pools",
    "workloads.<name>.computeClass": "fungible placement: one claim alternative per pool of the class",
    "workloads.<name>.pool": "placement on one pool",
    "workloads.<name>.sharedClaim": "share a `sharedClaims` entry's device with other pods",
    "workloads.<name>.model": "Hugging Face model id (required, except for `mig` workloads)",
    "workloads.<name>.image": "serving image (default: pinned vLLM GPU or TPU image)",
    "workloads.<name>.replicas": "Deployment replicas, 0 or more",
    "workloads.<name>.maxModelLen": "vLLM `--max-model-len`, 1 or more",
    "workloads.<name>.gpuMemoryUtilization": "vLLM `--gpu-memory-utilization` (for shared GPUs), above 0 and at most 1",
    "workloads.<name>.minAcceleratorMemoryGi": "every claim alternative must offer at least this much memory",
    "workloads.<name>.namespace": "namespace (created by the stack)",
    "workloads.<name>.port": "serving port",
    "workloads.<name>.extraArgs": "extra vLLM arguments",
    "workloads.<name>.service.type": "`ClusterIP`, or `LoadBalancer` (internal)",
    "workloads.<name>.service.public": "internet-facing load balancer (explicit opt-in)",
    "workloads.<name>.service.port": "Service port",
    "workloads.<name>.mig": "MIG slices on one GPU: `name`, `profile`, `model`, `port`, `extraArgs`",
    "workloads.<name>.deviceTolerations": "device taints its claim tolerates (`key`, `operator` `Equal`/`Exists`, "
                                          "`value`, `effect`): every request gets them; honoured from 1.36",
    "workloads.<name>.resources.cpu": "CPU request of each serving container (default: its share of the "
                                      "smallest node it can land on, see docs/workloads.md)",
    "workloads.<name>.resources.memory": "memory request and limit of each serving container, /dev/shm "
                                         "included (default: as for `cpu`)",
    "deviceClasses.<name>.driver": "`gpu.nvidia.com` or `tpu.google.com`",
    "deviceClasses.<name>.minMemoryGi": "devices with at least this much memory",
    "deviceClasses.<name>.productNames": "allowed product names",
    "deviceClasses.<name>.architectures": "allowed architectures",
    "deviceClasses.<name>.expressions": "extra CEL expressions (ANDed)",
    "deviceClasses.<name>.devices": "`gpu` (whole GPUs, default) or `mig` (MIG slices, judged on their real memory)",
    "sharedClaims.<name>.namespace": "namespace of the shared ResourceClaim",
    "sharedClaims.<name>.computeClass": "alternatives from a compute class",
    "sharedClaims.<name>.pool": "or one pool",
    "sharedClaims.<name>.deviceClass": "a `deviceClasses` entry instead of the driver's class",
    "sharedClaims.<name>.deviceTolerations": "device taints the claim tolerates, as a workload's",
    "drivers.nvidiaDra": "NVIDIA DRA driver chart (`chart`, `version`, `repo`, `namespace`, `values`)",
    "drivers.tpuDra": "TPU DRA driver chart",
    "drivers.nvidiaDevicePlugin": "NVIDIA device plugin chart (EKS, only for `dra: false` groups)",
    "drivers.clusterAutoscaler": "Cluster Autoscaler chart (EKS)",
    "drivers.nvidiaDriverInstaller.installerImage": "GKE COS driver installer image",
    "drivers.nvidiaDriverInstaller.pauseImage": "GKE driver installer pause image",
    "drivers.nvidiaDriverInstaller.partitionImage": "GKE GPU partitioning (MIG) image, pinned by digest",
    "drivers.nvidiaDriverInstaller.driverVersion": "GKE COS driver branch: `default` or `latest`",
    "hfToken": "Hugging Face token; must be a secret (`pulumi config set --secret hfToken ...`)",
}

#: Rows whose type and meaning come from the cloud registry, not the model.
FROM_REGISTRY = {"cluster.cloud": (lambda: " \\| ".join(clouds.names()), _registered_clouds)}

#: Keys whose sub-models are summarised in one row.
COLLAPSED = {"drivers.nvidiaDra", "drivers.tpuDra", "drivers.nvidiaDevicePlugin", "drivers.clusterAutoscaler",
             "workloads.<name>.mig", "nodePools.<pool>.taints", "workloads.<name>.deviceTolerations",
             "sharedClaims.<name>.deviceTolerations"}
PLACEHOLDERS = {"nodePools": "<pool>", "computeClasses": "<class>", "workloads": "<name>",
                "deviceClasses": "<name>", "sharedClaims": "<name>"}


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(inner annotation, optional?)"""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else annotation), True
    return annotation, False


def _type_name(annotation: Any) -> str:
    inner, optional = _unwrap(annotation)
    origin = typing.get_origin(inner)
    if origin is typing.Literal:
        text = " \\| ".join(str(a) for a in typing.get_args(inner))
    elif origin is list:
        text = f"list of {_type_name(typing.get_args(inner)[0])}"
    elif origin is dict:
        text = "map"
    elif origin is typing.Annotated:
        text = _type_name(typing.get_args(inner)[0])
    elif isinstance(inner, type):
        text = {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "dict": "map"}.get(
            inner.__name__, "object")
    else:
        text = str(inner)
    return text


def _default(field: Any) -> str:
    if field.is_required():
        return "**required**"
    value = field.default
    if value is PydanticUndefined or value is None:
        return "—"
    if isinstance(value, HelmChart):
        return f"`{value.chart}` `{value.version}` in `{value.namespace}`"
    if isinstance(value, BaseModel):
        return "(nested)"
    return f"`{json.dumps(value)}`" if not isinstance(value, str) else f"`{value}`"


def rows(model: type[BaseModel] = StackConfig, prefix: str = "") -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = f"{prefix}.{key}" if prefix else key
        inner, _ = _unwrap(field.annotation)
        origin = typing.get_origin(inner)
        if origin is dict and key in PLACEHOLDERS and not prefix:
            value_type = typing.get_args(inner)[1]
            out.extend(rows(value_type, f"{key}.{PLACEHOLDERS[key]}"))
            continue
        if isinstance(inner, type) and issubclass(inner, BaseModel) and path not in COLLAPSED:
            out.extend(rows(inner, path))
            continue
        if path in FROM_REGISTRY:
            type_text, meaning = FROM_REGISTRY[path]
            out.append((path, type_text(), _default(field), meaning()))
            continue
        out.append((path, _type_name(field.annotation), _default(field), DESCRIPTIONS.get(path, "")))
    return out


def markdown() -> str:
    lines = ["| key (under `gpu-fungibility:`) | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{p}` | {t} | {d} | {m} |" for p, t, d, m in rows()]
    lines.append(f"| `hfToken` | secret string | — | {DESCRIPTIONS['hfToken']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
