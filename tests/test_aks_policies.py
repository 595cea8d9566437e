"""The whole pack against the aks-dev plan: each mutation is what a careless change to an AKS component or
stack would produce, and the right rule must catch it (isolation decided from AKS's own labels and taints)."""

from __future__ import annotations

import pytest

from policy_gate import run_gate
from tests.policy_fixtures import shared_pack
from tests.test_policy_plans import _keys, baseline_of, k8s, one, plan_of, release

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"


@pytest.fixture(scope="session")
def pack():
    return shared_pack()


def agent_pool(plan: dict, name: str) -> dict:
    return one(plan, AGENT_POOL, lambda i: i.get("agentPoolName") == name)


def _urn_name(state: dict) -> str:
    return state["urn"].rsplit("::", 1)[1]


def device_plugin_admits_dra_nodes(plan):
    terms = release(plan, "nvidia-device-plugin")["inputs"]["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for term in terms:
        term["matchExpressions"] = [e for e in term["matchExpressions"] if e["key"] != "nvidia.com/gpu.dra"]
    return _urn_name(agent_pool(plan, "a100spot"))


def drop_the_spot_toleration_from_the_dra_plugin(plan):
    values = release(plan, "dra-driver-nvidia-gpu")["inputs"]["values"]["kubeletPlugin"]
    values["tolerations"] = [t for t in values["tolerations"] if t.get("key") != "kubernetes.azure.com/scalesetpriority"]
    return _urn_name(agent_pool(plan, "a100spot"))


def ask_aks_for_its_managed_gpu_stack_on_a_dra_pool(plan):
    pool = agent_pool(plan, "t4spot")
    pool["inputs"]["gpuProfile"]["nvidia"] = {"managementMode": "Managed"}
    return _urn_name(pool)


def expander_least_waste(plan):
    cluster = one(plan, CLUSTER)
    cluster["inputs"]["autoScalerProfile"]["expander"] = "least-waste"
    return _urn_name(cluster)


def reverse_the_scale_set_priorities(plan):
    configmap = k8s(plan, "ConfigMap", "cluster-autoscaler-priority-expander")
    configmap["inputs"]["data"]["priorities"] = "30:\n- ^aks-t4spot-[0-9]+-vmss$\n20:\n- ^aks-a100od-[0-9]+-vmss$\n" \
                                                "10:\n- ^aks-a100spot-[0-9]+-vmss$\n"
    return "vllm-gpu-deployment"


def dra_pool_at_zero(plan):
    pool = agent_pool(plan, "t4spot")
    pool["inputs"]["minCount"] = 0
    return _urn_name(pool)


def let_a_dra_pool_grow(plan):
    pool = agent_pool(plan, "a100spot")
    pool["inputs"]["maxCount"] = 2
    return _urn_name(pool)


def downgrade_aks_to_1_33(plan):
    cluster = one(plan, CLUSTER)
    cluster["inputs"]["kubernetesVersion"] = "1.33"
    return _urn_name(cluster)


def drop_the_dra_label_on_aks(plan):
    pool = agent_pool(plan, "t4spot")
    del pool["inputs"]["nodeLabels"]["nvidia.com/gpu.dra"]
    return _urn_name(pool)


def skip_the_driver_on_a_dra_pool(plan):
    pool = agent_pool(plan, "a100od")
    pool["inputs"]["gpuProfile"]["driver"] = "None"
    return _urn_name(pool)


def make_the_spot_pool_regular(plan):
    pool = agent_pool(plan, "a100spot")
    pool["inputs"]["scaleSetPriority"] = "Regular"
    return _urn_name(pool)


def make_the_api_server_private(plan):
    """A private API server answers only inside its VNet; nothing in the plan or config runs there."""
    cluster = one(plan, CLUSTER)
    cluster["inputs"]["apiServerAccessProfile"] = {"enablePrivateCluster": True}
    provider = one(plan, "pulumi:providers:kubernetes")
    return _urn_name(provider)


def ask_for_more_memory_than_the_t4_node_has(plan):
    """Standard_NC8as_T4_v3 (56 GiB): 54Gi fits its nominal memory, not what the node offers."""
    deployment = k8s(plan, "Deployment", "vllm-gpu")
    container = deployment["inputs"]["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"]["memory"] = "54Gi"
    container["resources"].setdefault("limits", {})["memory"] = "54Gi"
    return _urn_name(deployment)


MUTATIONS = [
    (make_the_api_server_private, "control-plane-reachable"),
    (ask_for_more_memory_than_the_t4_node_has, "serving-requests-fit-nodes"),
    (device_plugin_admits_dra_nodes, "dra-device-plugin-isolation", {"dra-reachable-pools-served"}),
    (drop_the_spot_toleration_from_the_dra_plugin, "dra-pool-served", {"dra-reachable-pools-served"}),
    (ask_aks_for_its_managed_gpu_stack_on_a_dra_pool, "dra-device-plugin-isolation", {"dra-reachable-pools-served"}),
    (expander_least_waste, "claim-follows-compute-class"),
    (reverse_the_scale_set_priorities, "claim-follows-compute-class"),
    (dra_pool_at_zero, "aks-dra-pool-size"),
    (let_a_dra_pool_grow, "aks-dra-pool-size"),
    (downgrade_aks_to_1_33, "dra-kubernetes-version"),
    (drop_the_dra_label_on_aks, "dra-reachable-pools-served", {"claim-follows-compute-class"}),
    (make_the_spot_pool_regular, "accelerator-pools-spot"),
    (skip_the_driver_on_a_dra_pool, "dra-pool-served"),
]
CASES = [(m[0], m[1], m[2] if len(m) > 2 else set()) for m in MUTATIONS]


def test_aks_dev_passes_every_rule(pack):
    result = baseline_of("aks-dev", pack)
    # One advisory: no AKS document confirms DRA is served at 1.35 (gpu_fungibility.support_calendar). The DRA
    # pools ship at minCount = maxCount, so aks-dra-pool-size has nothing to say.
    found = sorted((v.level, v.policy, v.urn.rsplit("::", 1)[1]) for v in result.violations)
    assert result.exit_code == 0 and found == [
        ("advisory", "kubernetes-version-advisories", "gpu-fungibility-aks-aks")], "\n".join(
            v.line() for v in result.violations)


def test_the_pack_sees_every_aks_pool_with_the_labels_and_taints_aks_adds():
    from policies.stack_view import Res, StackView

    plan = plan_of("aks-dev")
    resources = [Res(s["newState"]["type"], s["newState"]["urn"], s["newState"]["urn"].rsplit("::", 1)[1],
                     s["newState"]["inputs"]) for s in plan["steps"]]
    view = StackView(resources)
    assert view.cloud == "aks"
    found = {p.pool_name: p for p in view.accelerator_pools()}
    assert set(found) == {"a100spot", "a100od", "t4spot", "t4classic"}
    spot = found["a100spot"]
    assert spot.node_labels["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert ("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule") in [(t.key, t.value, t.effect)
                                                                              for t in spot.taints]
    assert "kubernetes.azure.com/scalesetpriority" not in found["a100od"].node_labels
    assert found["t4spot"].machine_types == ("Standard_NC8as_T4_v3",)  # what serving-requests-fit-nodes sizes


@pytest.mark.parametrize(("mutate", "policy", "also"), CASES, ids=[c[0].__name__ for c in CASES])
def test_aks_mutation_is_caught_by_the_right_rule(pack, mutate, policy, also):
    baseline = baseline_of("aks-dev", pack)
    plan = plan_of("aks-dev")
    culprit = mutate(plan)
    result = run_gate(plan, pack=pack)
    new = [v for v in result.violations if (v.policy, v.urn, v.message) not in _keys(baseline)]
    assert new, f"{mutate.__name__} went unnoticed"
    assert {v.policy for v in new} == {policy, *also}, "\n".join(v.line() for v in new)
    assert any(v.policy == policy and v.urn.endswith(f"::{culprit}") for v in new), "\n".join(v.line() for v in new)
