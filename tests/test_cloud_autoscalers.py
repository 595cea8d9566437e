"""Autoscalers that see DRA nodes: each cloud's GPU label and how its autoscaler treats a DRA node.

Facts from kubernetes/autoscaler at tag cluster-autoscaler-1.35.2 (2d425888): processors/customresources/
gpu_processor.go marks a node "resource unready" when it carries its provider's GPU label and no nvidia.com/gpu,
unless the provider says the node's GPUs are exposed via DRA. GCE: GPU label cloud.google.com/gke-accelerator,
DRA when cloud.google.com/gke-gpu-dra-driver=true (cloudprovider/gce/dynamicresources.go). AWS: GPU label
k8s.amazonaws.com/accelerator, no DRA exemption. Azure: GPU label kubernetes.azure.com/accelerator (set by AKS on
GPU nodes), no DRA exemption.
"""

import pytest
import yaml
from gpu_fungibility.autoscaler_priorities import UNLISTED_PRIORITY, expander_priorities
from gpu_fungibility.clouds import profile
from gpu_fungibility.wiring_keys import GKE_AUTOSCALER_GPU_DRA

from offline_plan.run import run_stack_file
from policies.rules.aks import validate_aks_dra_pool_size
from tests.policy_fixtures import Collector, R, resource_args

AWS_GPU_LABEL = "k8s.amazonaws.com/accelerator"


@pytest.fixture(scope="module")
def eks_dev():
    return run_stack_file("eks-dev")


def test_gke_dra_pools_carry_the_label_the_gce_autoscaler_exempts():
    assert GKE_AUTOSCALER_GPU_DRA == "cloud.google.com/gke-gpu-dra-driver"
    assert profile("gke").accelerator_labels("gpu", dra=True)[GKE_AUTOSCALER_GPU_DRA] == "true"
    assert GKE_AUTOSCALER_GPU_DRA not in profile("gke").accelerator_labels("gpu", dra=False)


def test_eks_dra_groups_never_carry_the_aws_gpu_label(eks_dev):
    for group in eks_dev.of_type("aws:eks/nodeGroup:NodeGroup"):
        assert AWS_GPU_LABEL not in (group.inputs.get("labels") or {}), group.urn


def test_the_eks_autoscaler_is_the_newest_patch_with_dra_read_access(eks_dev):
    (release,) = [r for r in eks_dev.of_type("kubernetes:helm.sh/v3:Release")
                  if r.inputs["chart"] == "cluster-autoscaler"]
    assert release.inputs["version"] == "9.59.0", release.urn
    assert release.inputs["values"]["image"]["tag"] == "v1.35.2", release.urn
    (role,) = eks_dev.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
    assert role.inputs["rules"][0]["apiGroups"] == ["resource.k8s.io"], role.urn


def test_from_1_35_the_autoscaler_reads_dra_objects_even_without_dra_pools():
    from gpu_fungibility.clouds.eks.cluster_autoscaler import dra_mode_locked_on

    assert not dra_mode_locked_on("1.34") and dra_mode_locked_on("1.35") and dra_mode_locked_on("1.36")


def test_the_eks_priority_configmap_lists_every_node_group(eks_dev):
    (config_map,) = [r for r in eks_dev.of_type("kubernetes:core/v1:ConfigMap")
                     if r.inputs["metadata"]["name"] == "cluster-autoscaler-priority-expander"]
    priorities = yaml.safe_load(config_map.inputs["data"]["priorities"])
    lowest = priorities[UNLISTED_PRIORITY]
    assert [r.split("-eks-", 1)[1].split("-[", 1)[0] for r in lowest] == ["system", "t4-classic"]
    assert min(priorities) == UNLISTED_PRIORITY


def test_unlisted_groups_come_last_once():
    assert expander_priorities([["a", "b"]], ["sys", "a", "sys"]) == {20: ["a"], 10: ["b"], 1: ["sys"]}
    assert expander_priorities([["a"]]) == {10: ["a"]}


def aks_pool(min_count: int, max_count: int, dra: bool = True) -> R:
    labels = {"nvidia.com/gpu.dra": "true"} if dra else {}
    return R("azure-native:containerservice:AgentPool", "gpu",
             {"agentPoolName": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "minCount": min_count,
              "maxCount": max_count, "nodeLabels": labels, "enableAutoScaling": True})


@pytest.mark.parametrize("low,high,dra,warned", [(1, 2, True, True), (1, 1, True, False), (1, 3, False, False)])
def test_an_aks_dra_pool_that_cannot_grow_is_said(low, high, dra, warned):
    collector = Collector()
    validate_aks_dra_pool_size(resource_args(aks_pool(low, high, dra)), collector)
    assert any("resource unready" in m for m in collector.messages) is warned
