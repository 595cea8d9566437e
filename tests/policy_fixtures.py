"""Hand-built resources for the policy tests: a GKE stack shaped like seed 000 + 003 and an
EKS stack shaped like seed 004, as the engine would send them (camelCase inputs).

``gke_stack()`` / ``eks_stack()`` return lists of :class:`R`; tests mutate a copy,
then turn it into pulumi_policy args (unit tests) or a preview-shaped plan (gate tests).
"""

from __future__ import annotations

import atexit
import copy
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility.node_selection import NodeTaint
from gpu_fungibility.tpu_dra import tpu_dra_values
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

STACK = "test"
PROJECT = "gpu-fungibility"


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}"


@dataclass
class R:
    type: str
    name: str
    props: dict[str, Any]
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)

    @property
    def urn(self) -> str:
        return urn(self.type, self.name)


def _opts(parent: str = "") -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent or None)


def resource_args(r: R, config: dict | None = None) -> ResourceValidationArgs:
    props = unknown_checking_proxy(copy.deepcopy(r.props))
    return ResourceValidationArgs(r.type, props, r.urn, r.name, _opts(r.parent), None, config)


def stack_args(resources: list[R], config: dict | None = None) -> StackValidationArgs:
    items = [PolicyResource(r.type, unknown_checking_proxy(copy.deepcopy(r.props)), r.urn, r.name, _opts(r.parent),
                            None, None, [], {}) for r in resources]
    by_urn = {item.urn: item for item in items}
    for r, item in zip(resources, items, strict=True):  # as the SDK does: dependency URNs become resources
        item.dependencies = [by_urn[d] for d in r.dependencies if d in by_urn]
    return StackValidationArgs(items, config)


class Collector:
    """A report_violation that keeps (message, urn) pairs."""

    def __init__(self) -> None:
        self.violations: list[tuple[str, str | None]] = []

    def __call__(self, message: str, urn: str | None = None) -> None:
        self.violations.append((message, urn))

    @property
    def messages(self) -> list[str]:
        return [m for m, _ in self.violations]


def run_resource_rule(rule, resources: list[R], config: dict | None = None) -> Collector:
    collector = Collector()
    for r in resources:
        rule(resource_args(r, config), collector)
    return collector


def run_stack_rule(rule, resources: list[R], config: dict | None = None) -> Collector:
    collector = Collector()
    rule(stack_args(resources, config), collector)
    return collector


def to_plan(resources: list[R]) -> dict[str, Any]:
    """A `pulumi preview --json`-shaped plan of these resources."""
    stack_urn = urn("pulumi:pulumi:Stack", f"{PROJECT}-{STACK}")
    steps = [{"op": "create", "urn": stack_urn,
              "newState": {"type": "pulumi:pulumi:Stack", "urn": stack_urn, "custom": False, "inputs": {}}}]
    for r in resources:
        steps.append({"op": "create", "urn": r.urn, "newState": {
            "type": r.type, "urn": r.urn, "custom": True, "parent": r.parent or stack_urn,
            "inputs": copy.deepcopy(r.props), "dependencies": list(r.dependencies), "provider": ""}})
    return {"steps": steps, "diagnostics": [], "changeSummary": {"create": len(steps)}}


def find(resources: list[R], name: str) -> R:
    return next(r for r in resources if r.name == name)


def broken_gke_plan() -> dict:
    """The GKE stack with three faults: the default device plugin not turned off on a DRA pool (stack policies),
    a public inference endpoint (a resource policy), an on-demand pool not marked as fallback (advisory)."""
    stack = gke_stack()
    del find(stack, "a100-40gb-pool").props["nodeConfig"]["labels"]["gke-no-default-nvidia-gpu-device-plugin"]
    find(stack, "vllm-tpu-svc").props["spec"]["type"] = "LoadBalancer"
    del find(stack, "a100-80gb-pool").props["nodeConfig"]["labels"]["gpu-fungibility/on-demand-fallback"]
    return to_plan(stack)


# ---- GKE (seed 000 + seed 003) -----------------------------------------------------------

GKE_POOL = "gcp:container/nodePool:NodePool"
EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
DRA_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
TPU_CHART = "oci://registry.k8s.io/dra-driver-google/charts/dra-driver-google-tpu"
CCC = "vllm-gpu-ccc"


def gke_gpu_pool(name: str, machine: str, accel: str, count: int, spot: bool, minimum: int) -> R:
    labels = {
        "gke-no-default-nvidia-gpu-device-plugin": "true",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.dra": "true",
        "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
        "cloud.google.com/compute-class": CCC,
    }
    if not spot:
        labels["gpu-fungibility/on-demand-fallback"] = "true"
    return R(GKE_POOL, f"{name}-pool", {
        "name": name, "cluster": "gpu-fungibility", "location": "us-central1", "nodeLocations": ["us-central1-c"],
        "autoscaling": {"minNodeCount": minimum, "maxNodeCount": 2},
        "nodeConfig": {
            "machineType": machine, "spot": spot, "diskSizeGb": 300, "labels": labels,
            "taints": [{"key": "cloud.google.com/compute-class", "value": CCC, "effect": "NO_SCHEDULE"}],
            "guestAccelerators": [{"type": accel, "count": count,
                                   "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"}}],
        },
    })


def dra_kubelet_values_gke() -> dict[str, Any]:
    return {
        "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"computeDomains": {"enabled": False}},
        "kubeletPlugin": {
            "priorityClassName": "",
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "cloud.google.com/compute-class", "operator": "Exists", "effect": "NoSchedule"},
            ],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "cloud.google.com/gke-nvidia-gpu-dra-driver", "operator": "In", "values": ["true"]}]},
            ]}}},
        },
    }


def gpu_claim_template(name: str, alternatives: list[tuple[str, int, str]], namespace: str = "inference") -> R:
    return R("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", f"{name}-template", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
            {"name": alt, "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": count,
             "selectors": [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].productName == '{product}'"}}]}
            for alt, count, product in alternatives]}]}}},
    })


def preferred_pools(label: str, pools: list[tuple[str, int]]) -> dict:
    """A pod's preferred node affinity: one term per (pool, weight) on the pool label."""
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "preference": {"matchExpressions": [{"key": label, "operator": "In", "values": [pool]}]}}
        for pool, weight in pools]}}


def vllm_deployment(name: str, claim_template: str, node_selector: dict[str, str], namespace: str = "inference",
                    taint_key: str = "nvidia.com/gpu", affinity: dict | None = None) -> R:
    return R("kubernetes:apps/v1:Deployment", name, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "nodeSelector": node_selector,
                **({"affinity": affinity} if affinity else {}),
                "tolerations": [{"key": taint_key, "operator": "Exists", "effect": "NoSchedule"}],
                "resourceClaims": [{"name": "accel", "resourceClaimTemplateName": claim_template}],
                "containers": [{
                    "name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                    "command": ["/bin/bash", "-c"],
                    "args": ["NUM=$(nvidia-smi -L | wc -l); exec python3 -m vllm.entrypoints.openai.api_server "
                             "--tensor-parallel-size=${NUM}"],
                    "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}},
                            {"name": "TOKENIZERS_PARALLELISM", "value": "false"}],
                    "resources": {"claims": [{"name": "accel"}]},
                }],
            },
        }},
    })


def service(name: str, lb: bool, annotations: dict[str, str] | None = None, namespace: str = "inference") -> R:
    return R("kubernetes:core/v1:Service", f"{name}-svc", {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}},
        "spec": {"type": "LoadBalancer" if lb else "ClusterIP", "selector": {"app": name},
                 "ports": [{"port": 8000, "targetPort": 8000}]},
    })


def gke_stack() -> list[R]:
    tpu_pool = R(GKE_POOL, "tpu-v6e-pool", {
        "name": "tpu-v6e", "cluster": "gpu-fungibility", "autoscaling": {"minNodeCount": 1, "maxNodeCount": 1},
        "nodeConfig": {"machineType": "ct6e-standard-1t", "spot": True,
                       "labels": {"cloud.google.com/gke-tpu-dra-driver": "true"}},
    })
    installer = R("kubernetes:apps/v1:DaemonSet", "nvidia-driver-installer", {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "nvidia-driver-installer", "namespace": "kube-system"},
        "spec": {"template": {"spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}},
            "tolerations": [{"operator": "Exists"}],
            "initContainers": [{"name": "nvidia-driver-installer", "image": "cos-nvidia-installer:fixed"}],
            "containers": [{"name": "pause", "image": "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"}],
        }}},
    })
    return [
        R("gcp:container/cluster:Cluster", "cluster", {
            "name": "gpu-fungibility", "location": "us-central1", "minMasterVersion": "1.35",
            "releaseChannel": {"channel": "REGULAR"}, "removeDefaultNodePool": True, "initialNodeCount": 1}),
        R(GKE_POOL, "system-pool", {"name": "system", "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3},
                                    "nodeConfig": {"machineType": "e2-standard-4"}}),
        gke_gpu_pool("a100-80gb", "a2-ultragpu-1g", "nvidia-a100-80gb", 1, spot=False, minimum=1),
        gke_gpu_pool("a100-40gb", "a2-highgpu-2g", "nvidia-tesla-a100", 2, spot=True, minimum=0),
        tpu_pool,
        installer,
        R(RELEASE, "nvidia-dra", {"chart": DRA_CHART, "version": "0.4.1", "name": "dra-driver-nvidia-gpu",
                                  "namespace": "dra-driver-nvidia-gpu", "createNamespace": True,
                                  "values": dra_kubelet_values_gke()}),
        R(RELEASE, "tpu-dra", {"chart": TPU_CHART, "version": "0.2.0", "name": "dra-driver-google-tpu",
                               "namespace": "dra-driver-google-tpu",
                               "values": tpu_dra_values([NodeTaint("google.com/tpu", "present", "NoSchedule")])}),
        R("kubernetes:cloud.google.com/v1:ComputeClass", CCC, {
            "apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": CCC},
            "spec": {"priorities": [{"nodepools": ["a100-80gb"]}, {"nodepools": ["a100-40gb"]}],
                     "autoscalingPolicy": {"consolidationDelayMinutes": 3}}}),
        gpu_claim_template("vllm-gpu", [("a100-80gb", 1, "NVIDIA A100-SXM4-80GB"),
                                        ("a100-40gb", 2, "NVIDIA A100-SXM4-40GB")]),
        R("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "vllm-tpu-template", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "vllm-tpu", "namespace": "inference"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "tpus", "exactly": {"deviceClassName": "tpu.google.com", "allocationMode": "All"}}]}}}}),
        vllm_deployment("vllm-gpu", "vllm-gpu", {"cloud.google.com/compute-class": CCC},
                        affinity=preferred_pools("cloud.google.com/gke-nodepool", [("a100-80gb", 100)])),
        vllm_deployment("vllm-tpu", "vllm-tpu", {"cloud.google.com/gke-nodepool": "tpu-v6e"}, taint_key="google.com/tpu"),
        service("vllm-gpu", lb=True, annotations={"networking.gke.io/load-balancer-type": "Internal"}),
        service("vllm-tpu", lb=False),
    ]


# ---- EKS (seed 004) -------------------------------------------------------------------------


def eks_group(name: str, instance: str, dra: bool, minimum: int = 1, spot: bool = True,
              ami: str = "AL2023_x86_64_NVIDIA") -> R:
    labels = {"nvidia.com/gpu.present": "true"}
    if dra:
        labels["nvidia.com/gpu.dra"] = "true"
    return R(EKS_GROUP, f"{name}-group", {
        "clusterName": "gpu-fungibility", "nodeGroupName": f"gpu-fungibility-{name}", "amiType": ami,
        "capacityType": "SPOT" if spot else "ON_DEMAND", "instanceTypes": [instance],
        "scalingConfig": {"minSize": minimum, "maxSize": 2, "desiredSize": minimum},
        "labels": labels, "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    })


def device_plugin_values_seed_004() -> dict[str, Any]:
    exclude_dra = {"key": "nvidia.com/gpu.dra", "operator": "NotIn", "values": ["true"]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In",
                               "values": ["true"]}, exclude_dra]},
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In",
                               "values": ["NVIDIA"]}, exclude_dra]},
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}, exclude_dra]},
    ]}}}}


def eks_stack() -> list[R]:
    quota = R("kubernetes:core/v1:ResourceQuota", "nvidia-quota", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "nvidia", "namespace": "nvidia-dra"},
        "spec": {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [
            {"operator": "In", "scopeName": "PriorityClass",
             "values": ["system-node-critical", "system-cluster-critical"]}]}}})
    return [
        R("aws:eks/cluster:Cluster", "cluster", {"name": "gpu-fungibility", "version": "1.35",
                                                 "upgradePolicy": {"supportType": "STANDARD"}}),
        eks_group("system", "m6i.large", dra=False, ami="AL2023_x86_64_STANDARD", spot=False),
        eks_group("a100", "p4d.24xlarge", dra=True),
        eks_group("l4", "g6.12xlarge", dra=True),
        eks_group("t4-classic", "g4dn.xlarge", dra=False),
        quota,
        R(RELEASE, "nvidia-dra", {"chart": DRA_CHART, "version": "0.4.1", "name": "dra-driver-nvidia-gpu",
                                  "namespace": "nvidia-dra", "values": {
                                      "gpuResourcesEnabledOverride": True,
                                      "resources": {"computeDomains": {"enabled": False}},
                                      "controller": {"affinity": None},
                                      "kubeletPlugin": {
                                          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                                           "effect": "NoSchedule"}],
                                          "affinity": {"nodeAffinity": {
                                              "requiredDuringSchedulingIgnoredDuringExecution": {
                                                  "nodeSelectorTerms": [{"matchExpressions": [
                                                      {"key": "nvidia.com/gpu.dra", "operator": "In",
                                                       "values": ["true"]}]}]}}}}}}),
        R(RELEASE, "device-plugin", {"chart": "nvidia-device-plugin", "version": "0.20.0", "name": "nvidia-device-plugin",
                                     "repositoryOpts": {"repo": "https://nvidia.github.io/k8s-device-plugin"},
                                     "namespace": "nvidia-device-plugin", "values": device_plugin_values_seed_004()}),
        R(RELEASE, "autoscaler", {"chart": "cluster-autoscaler", "version": "9.59.0", "namespace": "kube-system",
                                  "repositoryOpts": {"repo": "https://kubernetes.github.io/autoscaler"},
                                  "values": {"extraArgs": {"expander": "priority"}}}),
        R("kubernetes:core/v1:ConfigMap", "priority-expander", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            "data": {"priorities": "20:\n  - .*-a100-.*\n10:\n  - .*-l4-.*\n"}}),
        gpu_claim_template("vllm-gpu", [("a100", 8, "NVIDIA A100-SXM4-40GB"), ("l4", 4, "NVIDIA L4")]),
        vllm_deployment("vllm-gpu", "vllm-gpu", {}, affinity=preferred_pools(
            "eks.amazonaws.com/nodegroup", [("gpu-fungibility-a100", 100)])),
        service("vllm-gpu", lb=True, annotations={"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}),
    ]


# ---- one pack process for the whole test session -------------------------------------------

_PACK = None


def shared_pack():
    """The policy pack, started once per test session and stopped at exit."""
    global _PACK
    if _PACK is None:
        from policy_gate import PolicyPackProcess

        _PACK = PolicyPackProcess()
        atexit.register(_PACK.close)
    return _PACK
