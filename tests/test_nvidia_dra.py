"""The NVIDIA DRA driver values (GKE and EKS) and the component, EKS variant under mocks."""

from __future__ import annotations

import pulumi
import pytest
from gpu_fungibility import clouds
from gpu_fungibility.errors import ComponentArgsError
from gpu_fungibility.helm_values import merge
from gpu_fungibility.node_selection import NodeTaint, toleration_tolerates, tolerations_for
from gpu_fungibility.nvidia_dra import NvidiaDraDriver, NvidiaDraDriverArgs, nvidia_dra_values

from offline_plan.run import Captured, run_program
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config

CHART = NvidiaDraDriverArgs(cloud="eks", chart="oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
                            version="0.4.1", namespace="dra-driver-nvidia-gpu")
EKS_GPU_TAINT = NodeTaint("nvidia.com/gpu", "true", "NoSchedule")
DRA_AFFINITY_TERMS = [{"matchExpressions": [
    {"key": "nvidia.com/gpu.present", "operator": "Exists"},
    {"key": "nvidia.com/gpu.dra", "operator": "In", "values": ["true"]},
]}]


def _terms(values: dict) -> list:
    return values["kubeletPlugin"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


# ---- values, as pure functions ----

def test_gke_values_follow_seed_000():
    values = nvidia_dra_values("gke", [NodeTaint("cloud.google.com/compute-class", "ccc", "NoSchedule"),
                                       NodeTaint("nvidia.com/gpu", "present", "NoSchedule")])
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia/"
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["kubeletPlugin"]["priorityClassName"] == ""
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "ccc", "effect": "NoSchedule"},
    ]
    assert _terms(values) == DRA_AFFINITY_TERMS


def test_gke_with_quota_keeps_the_chart_priority_class():
    values = nvidia_dra_values("gke", [], resource_quota=True)
    assert "priorityClassName" not in values["kubeletPlugin"]


def test_eks_values_follow_seed_004():
    values = nvidia_dra_values("eks", [EKS_GPU_TAINT], resource_quota=True)
    assert "nvidiaDriverRoot" not in values, "the AL2023 NVIDIA AMI keeps the driver on the host root (chart default)"
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"]["computeDomains"] == {"enabled": False}
    assert values["controller"] == {"affinity": None}
    plugin = values["kubeletPlugin"]
    assert "priorityClassName" not in plugin
    assert plugin["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert plugin["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert _terms(values) == DRA_AFFINITY_TERMS


def test_user_taints_get_their_own_tolerations():
    taints = [NodeTaint("dedicated", "inference", "NoExecute"), NodeTaint("team", "", "NoSchedule")]
    tolerations = nvidia_dra_values("eks", taints)["kubeletPlugin"]["tolerations"]
    for taint in taints:
        assert any(toleration_tolerates(t, taint) for t in tolerations), taint
    assert all("key" in t for t in tolerations), "never a blanket toleration"


def test_toleration_matching_follows_kubernetes():
    taint = NodeTaint("k", "v", "NoSchedule")
    assert toleration_tolerates({"key": "k", "operator": "Exists"}, taint)
    assert toleration_tolerates({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, taint)
    assert not toleration_tolerates({"key": "k", "operator": "Equal", "value": "w"}, taint)
    assert not toleration_tolerates({"key": "k", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert not toleration_tolerates({"key": "other", "operator": "Exists"}, taint)


def test_tolerations_are_not_repeated():
    taint = NodeTaint("k", "v", "NoSchedule")
    assert tolerations_for([taint, taint]) == [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]


def test_stack_values_are_merged_over_the_projects_like_helm():
    values = nvidia_dra_values("gke", [], extra={"kubeletPlugin": {"priorityClassName": "x"}, "logVerbosity": "6"})
    assert values["kubeletPlugin"]["priorityClassName"] == "x"
    assert values["kubeletPlugin"]["affinity"], "maps merge, the rest of kubeletPlugin stays"
    assert values["logVerbosity"] == "6"
    assert merge({"a": [1, 2]}, {"a": [3]}) == {"a": [3]}, "lists replace, as in Helm"


def test_for_stack_collects_the_dra_gpu_pools_taints_only():
    cfg = parse_stack_config({
        "cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-c"]},
        "nodePools": {
            "dra": {"machineType": "g2-standard-4", "accelerator": {"type": "nvidia-l4"},
                    "taints": [{"key": "team", "value": "ml"}]},
            "classic": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}, "dra": False,
                        "taints": [{"key": "legacy", "value": "yes"}]},
        },
    })
    args = arguments.nvidia_dra(cfg).args
    keys = {t["key"] for t in args["node_taints"]}
    assert "team" in keys and "nvidia.com/gpu" in keys
    assert "legacy" not in keys, "a dra: false pool is not the DRA plugin's business"
    assert args["cloud"] == "gke"
    assert args.get("resource_quota", clouds.profile("gke").nvidia_dra_quota_by_default) is False


# ---- the component, EKS variant, under mocks ----

def _run_component(build) -> list[Captured]:
    """Run ``build`` alone under the offline plan's mocks (the config only has to load)."""
    minimal = {"cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-c"]}}
    return run_program(minimal, compose_fn=lambda _loaded: build()).resources


@pytest.fixture(scope="module")
def eks_driver() -> dict[str, Captured]:
    def build():
        provider = pulumi.ProviderResource("kubernetes", "eks-k8s", {})
        NvidiaDraDriver(
            "nvidia-dra",
            NvidiaDraDriverArgs(**{**CHART, "namespace": "nvidia"}, node_taints=[EKS_GPU_TAINT.as_dict()],
                                resource_quota=True),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )

    return {c.name: c for c in _run_component(build)}


def test_eks_component_creates_namespace_quota_and_release(eks_driver):
    quota = eks_driver["nvidia-dra-quota"]
    assert quota.inputs["metadata"]["namespace"] == "nvidia", quota.urn
    assert quota.inputs["spec"] == {
        "hard": {"pods": "100"},
        "scopeSelector": {"matchExpressions": [{
            "operator": "In", "scopeName": "PriorityClass",
            "values": ["system-node-critical", "system-cluster-critical"]}]},
    }, quota.urn
    release = eks_driver["nvidia-dra-release"]
    assert release.inputs["namespace"] == "nvidia" and release.inputs["version"] == "0.4.1", release.urn
    assert release.inputs["values"]["controller"] == {"affinity": None}, release.urn
    assert release.inputs["allowNullValues"] is True, f"{release.urn}: null must reach Helm to clear the affinity"
    assert quota.urn in release.dependencies, f"{release.urn}: pods are admitted only once the quota exists"


def test_eks_component_children_use_the_given_provider(eks_driver):
    provider = eks_driver["eks-k8s"]
    for name in ("nvidia-dra-namespace", "nvidia-dra-quota", "nvidia-dra-release"):
        assert eks_driver[name].provider.startswith(provider.urn + "::"), eks_driver[name].urn


def test_an_unpinnable_chart_is_refused():
    def build():
        NvidiaDraDriver("bad", NvidiaDraDriverArgs(**{**CHART, "cloud": "gke", "chart": "dra-driver"}))

    with pytest.raises(ComponentArgsError, match=r"- chart: use an oci:// chart reference"):
        _run_component(build)
    stack = {"cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-c"]},
             "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}},
             "drivers": {"nvidiaDra": {**CHART, "chart": "dra-driver"}}}
    stack["drivers"]["nvidiaDra"].pop("cloud")
    with pytest.raises(ConfigError, match=r"drivers\.nvidiaDra\.chart: use an oci:// chart reference"):
        run_program(stack)
