"""The whole pack, over gRPC, against the offline plans of the shipped stacks.

Every shipped stack (``Pulumi.<stack>.yaml``) must pass; each mutation of a real
plan below is what a careless change to a component or a stack would produce,
and must be caught by the right rule (and only by it).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from typing import Any

import pytest

import offline_plan.planjson as planjson
import offline_plan.run as offline_run
from policy_gate import GateResult, run_gate
from tests.policy_fixtures import shared_pack
from tools.stacks_in_ci import SHIPPED_STACKS

NVIDIA_DRA_CHART = "dra-driver-nvidia-gpu"


@pytest.fixture(scope="session")
def pack():
    return shared_pack()


@functools.cache
def _plan_text(stack: str) -> str:
    run = offline_run.run_stack_file(stack)
    return json.dumps(planjson.plan_document(run))


def plan_of(stack: str) -> dict[str, Any]:
    """A fresh copy of the stack's offline plan.json document."""
    return json.loads(_plan_text(stack))


# ---- finding things in a plan ---------------------------------------------------------------------


def states(plan: dict, type_: str) -> list[dict]:
    return [s["newState"] for s in plan["steps"] if s.get("newState", {}).get("type") == type_]


def one(plan: dict, type_: str, pred: Callable[[dict], bool] = lambda i: True) -> dict:
    found = [s for s in states(plan, type_) if pred(s["inputs"])]
    assert len(found) == 1, f"{len(found)} {type_} match in the plan"
    return found[0]


def gke_pool(plan: dict, name: str) -> dict:
    return one(plan, "gcp:container/nodePool:NodePool", lambda i: i.get("name") == name)


def eks_group(plan: dict, suffix: str) -> dict:
    return one(plan, "aws:eks/nodeGroup:NodeGroup", lambda i: i.get("nodeGroupName", "").endswith(f"-{suffix}"))


def release(plan: dict, chart_name: str) -> dict:
    return one(plan, "kubernetes:helm.sh/v3:Release", lambda i: i.get("chart", "").rsplit("/", 1)[-1] == chart_name)


def k8s(plan: dict, kind: str, name: str) -> dict:
    return one(plan, f"kubernetes:{_api(kind)}:{kind}", lambda i: i.get("metadata", {}).get("name") == name)


def _api(kind: str) -> str:
    return {"Deployment": "apps/v1", "DaemonSet": "apps/v1", "Service": "core/v1", "ConfigMap": "core/v1",
            "ComputeClass": "cloud.google.com/v1", "ResourceClaimTemplate": "resource.k8s.io/v1"}[kind]


def clone_pool(plan: dict, source: dict, name: str, labels: dict[str, str]) -> dict:
    """A new GKE node pool in the plan, shaped like ``source`` but with other labels."""
    state = copy.deepcopy(source)
    state["urn"] = state["urn"].rsplit("::", 1)[0] + f"::{name}-nodepool"
    state["inputs"]["name"] = name
    state["inputs"]["nodeConfig"]["labels"] = labels
    state["inputs"]["nodeConfig"]["taints"] = []
    state["inputs"]["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"] = {
        "gpuDriverVersion": "DEFAULT"}
    plan["steps"].append({"op": "create", "urn": state["urn"], "newState": state})
    return state


def kubelet_plugin(plan: dict) -> dict:
    return release(plan, NVIDIA_DRA_CHART)["inputs"]["values"]["kubeletPlugin"]


def pod_spec(plan: dict, name: str) -> dict:
    return k8s(plan, "Deployment", name)["inputs"]["spec"]["template"]["spec"]


def gpu_subrequests(plan: dict) -> list[dict]:
    template = k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")
    return template["inputs"]["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"]


# ---- every shipped stack passes ------------------------------------------------------------------------


def test_the_shipped_stacks_are_the_three_environments():
    assert {"dev", "eks-dev", "prod"} <= set(SHIPPED_STACKS)


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_shipped_stack_passes_the_pack(pack, stack):
    result = run_gate(plan_of(stack), pack=pack)
    assert result.resources_checked > 10
    assert result.mandatory == [], "\n".join(v.line() for v in result.mandatory)
    assert result.exit_code == 0


# ---- mutations, each caught by the right rule --------------------------------------------------------------


def drop_gke_no_default_label(plan):
    del gke_pool(plan, "a100-40gb")["inputs"]["nodeConfig"]["labels"]["gke-no-default-nvidia-gpu-device-plugin"]
    return "a100-40gb-nodepool"


def label_a_classic_pool_for_dra(plan):
    clone_pool(plan, gke_pool(plan, "a100-40gb"), "a100-classic",
               {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.dra": "true"})
    return "a100-classic-nodepool"


def gpu_present_on_a_classic_pool_with_the_chart_default_affinity(plan):
    clone_pool(plan, gke_pool(plan, "a100-40gb"), "a100-classic", {"nvidia.com/gpu.present": "true"})
    del kubelet_plugin(plan)["affinity"]
    return "a100-classic-nodepool"


def drop_the_compute_class_toleration(plan):
    values = kubelet_plugin(plan)
    values["tolerations"] = [t for t in values["tolerations"] if t.get("key") != "cloud.google.com/compute-class"]
    return "a100-80gb-nodepool"


def drop_the_tpu_driver_tolerations(plan):
    release(plan, "dra-driver-google-tpu")["inputs"]["values"]["kubeletPlugin"]["tolerations"] = []
    return "tpu-v6e-nodepool"


def let_gke_install_its_driver(plan):
    accelerator = gke_pool(plan, "a100-80gb")["inputs"]["nodeConfig"]["guestAccelerators"][0]
    accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] = "DEFAULT"
    return "a100-80gb-nodepool"


def remove_the_driver_installer(plan):
    installer = one(plan, "kubernetes:apps/v1:DaemonSet",
                    lambda i: i.get("metadata", {}).get("name") == "nvidia-driver-installer")
    plan["steps"] = [s for s in plan["steps"] if s.get("newState") is not installer]
    return "a100-80gb-nodepool"


def keep_the_chart_priority_class_without_quota(plan):
    del kubelet_plugin(plan)["priorityClassName"]
    return release(plan, NVIDIA_DRA_CHART)["urn"].rsplit("::", 1)[1]


def downgrade_gke_to_1_33(plan):
    cluster = one(plan, "gcp:container/cluster:Cluster")
    cluster["inputs"]["minMasterVersion"] = "1.33"
    return cluster["urn"].rsplit("::", 1)[1]


def pin_gke_to_1_34_without_a_channel(plan):
    cluster = one(plan, "gcp:container/cluster:Cluster")
    cluster["inputs"]["minMasterVersion"] = "1.34"  # GKE 1.34: end of life 2026-10-01
    cluster["inputs"]["releaseChannel"] = {"channel": "UNSPECIFIED"}
    return cluster["urn"].rsplit("::", 1)[1]


def make_the_service_public(plan):
    service = k8s(plan, "Service", "vllm-gpu")
    service["inputs"]["spec"]["type"] = "LoadBalancer"
    service["inputs"]["metadata"]["annotations"] = {}
    return service["urn"].rsplit("::", 1)[1]


def unpin_a_chart(plan):
    tpu = release(plan, "dra-driver-google-tpu")
    del tpu["inputs"]["version"]
    return tpu["urn"].rsplit("::", 1)[1]


def put_the_token_in_a_literal(plan):
    env = pod_spec(plan, "vllm-gpu")["containers"][0]["env"]
    env[:] = [{"name": "HF_TOKEN", "value": "[secret]"} if e["name"] == "HF_TOKEN" else e for e in env]
    return "vllm-gpu-deployment"


def request_the_nominal_sizes_of_a_node(plan):
    """158Gi fitted a2-ultragpu-1g when allocatable was computed from nominal memory; the node reports less."""
    resources = pod_spec(plan, "vllm-gpu")["containers"][0]["resources"]
    resources["requests"]["memory"] = resources["limits"]["memory"] = "158Gi"
    return "vllm-gpu-deployment"


def ask_the_tpu_server_for_the_old_catalogs_memory(plan):
    resources = pod_spec(plan, "vllm-tpu")["containers"][0]["resources"]
    resources["requests"]["memory"] = resources["limits"]["memory"] = "431Gi"  # ct6e-standard-1t has 176 GiB
    return "vllm-tpu-deployment"


def request_more_cpu_than_an_eks_node_has(plan):
    pod_spec(plan, "vllm-gpu")["containers"][0]["resources"]["requests"]["cpu"] = "4"  # g6e.xlarge: 4 vCPUs
    return "vllm-gpu-deployment"


def reverse_the_compute_class(plan):
    k8s(plan, "ComputeClass", "vllm-gpu-ccc")["inputs"]["spec"]["priorities"].reverse()
    return "vllm-gpu-deployment"


def claim_an_unknown_device_class(plan):
    gpu_subrequests(plan)[1]["deviceClassName"] = "gpu.example.com"
    return k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")["urn"].rsplit("::", 1)[1]


def break_a_cel_selector(plan):
    gpu_subrequests(plan)[0]["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName =="}}]
    return k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")["urn"].rsplit("::", 1)[1]


def nine_alternatives(plan):
    subrequests = gpu_subrequests(plan)
    subrequests.extend(copy.deepcopy(subrequests[-1]) | {"name": f"extra-{i}"} for i in range(9 - len(subrequests)))
    return k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")["urn"].rsplit("::", 1)[1]


def make_a_spot_pool_on_demand(plan):
    gke_pool(plan, "a100-40gb")["inputs"]["nodeConfig"]["spot"] = False
    return "a100-40gb-nodepool"


def device_plugin_admits_dra_nodes(plan):
    terms = release(plan, "nvidia-device-plugin")["inputs"]["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for term in terms:
        term["matchExpressions"] = [e for e in term["matchExpressions"] if e["key"] != "nvidia.com/gpu.dra"]
    return eks_group(plan, "l40s")["urn"].rsplit("::", 1)[1]


def dra_plugin_on_the_chart_default_affinity(plan):
    del kubelet_plugin(plan)["affinity"]
    return eks_group(plan, "t4-classic")["urn"].rsplit("::", 1)[1]


def drop_the_gpu_toleration_on_eks(plan):
    values = kubelet_plugin(plan)
    values["tolerations"] = [t for t in values["tolerations"] if t.get("key") != "nvidia.com/gpu"]
    return eks_group(plan, "l40s")["urn"].rsplit("::", 1)[1]


def downgrade_eks_to_1_33(plan):
    cluster = one(plan, "aws:eks/cluster:Cluster")
    cluster["inputs"]["version"] = "1.33"
    return cluster["urn"].rsplit("::", 1)[1]


def leave_eks_in_extended_support(plan):
    cluster = one(plan, "aws:eks/cluster:Cluster")
    del cluster["inputs"]["upgradePolicy"]
    return cluster["urn"].rsplit("::", 1)[1]


def dra_group_at_zero(plan):
    group = eks_group(plan, "l40s")
    group["inputs"]["scalingConfig"]["minSize"] = 0
    return group["urn"].rsplit("::", 1)[1]


def reverse_the_autoscaler_priorities(plan):
    configmap = k8s(plan, "ConfigMap", "cluster-autoscaler-priority-expander")
    text = configmap["inputs"]["data"]["priorities"]
    lines = text.splitlines()
    priorities = [line for line in lines if not line.startswith((" ", "-"))]
    swapped = {a: b for a, b in zip(priorities, reversed(priorities), strict=True)}
    configmap["inputs"]["data"]["priorities"] = "\n".join(swapped.get(line, line) for line in lines) + "\n"
    return "vllm-gpu-deployment"


def drop_the_preferred_affinity(plan):
    """The claim's order alone: among running l40s and a10g-4x nodes, the bigger g5.12xlarge wins."""
    pod_spec(plan, "vllm-gpu").pop("affinity")
    return "vllm-gpu-deployment"


def prefer_the_on_demand_a100(plan):
    """Weights that rank AKS's on-demand A100 pool above the spot one the claim lists first."""
    terms = pod_spec(plan, "vllm-gpu")["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    terms[0]["preference"]["matchExpressions"][0]["values"] = ["a100od"]
    return "vllm-gpu-deployment"


def let_an_aks_dra_pool_grow(plan):
    """maxCount above minCount on an AKS DRA pool: AKS's autoscaler would not grow it (aks-dra-pool-size)."""
    pool = next(s["newState"] for s in plan["steps"] if s.get("newState", {}).get("type")
                == "azure-native:containerservice:AgentPool" and s["newState"]["urn"].endswith("::t4spot-pool"))
    pool["inputs"]["maxCount"] = 3
    return "t4spot-pool"


def bottlerocket_on_a_dra_group(plan):
    group = eks_group(plan, "a10g-4x")
    group["inputs"]["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"
    return group["urn"].rsplit("::", 1)[1]


def drop_the_tpu_dra_label(plan):
    del gke_pool(plan, "tpu-v6e")["inputs"]["nodeConfig"]["labels"]["cloud.google.com/gke-tpu-dra-driver"]
    return "tpu-v6e-nodepool"


def drop_the_dra_label_on_eks(plan):
    group = eks_group(plan, "l40s")
    del group["inputs"]["labels"]["nvidia.com/gpu.dra"]
    return group["urn"].rsplit("::", 1)[1]


def select_a_gpu_the_pool_lacks(plan):
    gpu_subrequests(plan)[1]["selectors"] = [{"cel": {"expression": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == "
        "'NVIDIA H100 80GB HBM3'")}}]
    return k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")["urn"].rsplit("::", 1)[1]


def ask_more_gpus_than_a_node_has(plan):
    gpu_subrequests(plan)[1]["count"] = 8  # a10g-4x nodes carry 4
    return k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")["urn"].rsplit("::", 1)[1]


def lower_case_all_on_the_tpu_claim(plan):
    template = k8s(plan, "ResourceClaimTemplate", "vllm-tpu-claim")
    template["inputs"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "all"
    return template["urn"].rsplit("::", 1)[1]


def an_empty_constraint(plan):
    template = k8s(plan, "ResourceClaimTemplate", "vllm-gpu-claim")
    template["inputs"]["spec"]["spec"]["devices"]["constraints"] = [{"requests": ["gpu"]}]
    return template["urn"].rsplit("::", 1)[1]


def turn_off_the_dns_endpoint(plan):
    """prod as it shipped before: only a private IP endpoint, authorized for a range nothing in the plan is in."""
    del one(plan, "gcp:container/cluster:Cluster")["inputs"]["controlPlaneEndpointsConfig"]
    return one(plan, "pulumi:providers:kubernetes")["urn"].rsplit("::", 1)[1]


def make_the_eks_endpoint_private_only(plan):
    vpc = one(plan, "aws:eks/cluster:Cluster")["inputs"]["vpcConfig"]
    vpc["endpointPublicAccess"] = False
    del vpc["publicAccessCidrs"]
    return one(plan, "pulumi:providers:kubernetes")["urn"].rsplit("::", 1)[1]


MUTATIONS = [
    ("dev", drop_gke_no_default_label, "dra-device-plugin-isolation", {"dra-reachable-pools-served"}),
    # a DRA-labelled pool that also lets GKE install its driver: two rules see it
    ("dev", label_a_classic_pool_for_dra, "dra-device-plugin-isolation", {"gke-dra-driver-install"}),
    ("dev", gpu_present_on_a_classic_pool_with_the_chart_default_affinity, "dra-device-plugin-isolation"),
    ("dev", drop_the_compute_class_toleration, "dra-pool-served", {"dra-reachable-pools-served"}),
    ("dev", drop_the_tpu_driver_tolerations, "dra-pool-served", {"dra-reachable-pools-served"}),
    ("dev", let_gke_install_its_driver, "gke-dra-driver-install"),
    ("dev", remove_the_driver_installer, "gke-dra-driver-install"),
    ("dev", keep_the_chart_priority_class_without_quota, "gke-critical-priority-quota"),
    ("dev", downgrade_gke_to_1_33, "dra-kubernetes-version"),
    ("dev", pin_gke_to_1_34_without_a_channel, "kubernetes-version-supported"),
    ("eks-dev", leave_eks_in_extended_support, "kubernetes-version-advisories"),
    ("dev", make_the_service_public, "no-public-inference-endpoint"),
    ("dev", unpin_a_chart, "pinned-charts"),
    ("dev", put_the_token_in_a_literal, "secrets-from-secret-store"),
    ("dev", reverse_the_compute_class, "claim-follows-compute-class"),
    ("dev", claim_an_unknown_device_class, "claim-shape"),
    ("dev", break_a_cel_selector, "claim-shape"),
    ("dev", nine_alternatives, "claim-shape", {"claim-follows-compute-class"}),  # the class has 2 pools
    ("dev", make_a_spot_pool_on_demand, "accelerator-pools-spot"),
    ("eks-dev", device_plugin_admits_dra_nodes, "dra-device-plugin-isolation", {"dra-reachable-pools-served"}),
    ("eks-dev", dra_plugin_on_the_chart_default_affinity, "dra-device-plugin-isolation"),
    ("eks-dev", bottlerocket_on_a_dra_group, "dra-device-plugin-isolation", {"dra-reachable-pools-served"}),
    ("eks-dev", drop_the_gpu_toleration_on_eks, "dra-pool-served", {"dra-reachable-pools-served"}),
    ("eks-dev", downgrade_eks_to_1_33, "dra-kubernetes-version"),
    ("eks-dev", reverse_the_autoscaler_priorities, "claim-follows-compute-class"),
    ("eks-dev", dra_group_at_zero, "eks-dra-scale-from-zero"),
    ("eks-dev", drop_the_preferred_affinity, "preference-follows-claim"),
    ("aks-dev", prefer_the_on_demand_a100, "preference-follows-claim"),
    ("aks-dev", let_an_aks_dra_pool_grow, "aks-dra-pool-size"),
    # A pool a claim reaches but that lost its DRA label: the label-driven rules see nothing wrong.
    ("dev", drop_the_tpu_dra_label, "dra-reachable-pools-served"),
    ("eks-dev", drop_the_dra_label_on_eks, "dra-reachable-pools-served", {"claim-follows-compute-class"}),
    ("dev", select_a_gpu_the_pool_lacks, "claim-alternative-satisfiable"),
    ("eks-dev", ask_more_gpus_than_a_node_has, "claim-alternative-satisfiable"),
    ("dev", lower_case_all_on_the_tpu_claim, "claim-shape"),
    ("dev", an_empty_constraint, "claim-shape"),
    ("dev", request_the_nominal_sizes_of_a_node, "serving-requests-fit-nodes"),
    ("dev", ask_the_tpu_server_for_the_old_catalogs_memory, "serving-requests-fit-nodes"),
    ("eks-dev", request_more_cpu_than_an_eks_node_has, "serving-requests-fit-nodes"),
    ("prod", turn_off_the_dns_endpoint, "control-plane-reachable"),
    ("eks-dev", make_the_eks_endpoint_private_only, "control-plane-reachable"),
]


_BASELINES: dict[str, GateResult] = {}


def baseline_of(stack: str, pack) -> GateResult:
    if stack not in _BASELINES:
        _BASELINES[stack] = run_gate(plan_of(stack), pack=pack)
    return _BASELINES[stack]


def _keys(result: GateResult) -> set[tuple[str, str, str]]:
    return {(v.policy, v.urn, v.message) for v in result.violations}


CASES = [(m[0], m[1], m[2], m[3] if len(m) > 3 else set()) for m in MUTATIONS]


@pytest.mark.parametrize(("stack", "mutate", "policy", "also"), CASES, ids=[c[1].__name__ for c in CASES])
def test_mutation_is_caught_by_the_right_rule(pack, stack, mutate, policy, also):
    baseline = baseline_of(stack, pack)
    plan = plan_of(stack)
    culprit = mutate(plan)
    result = run_gate(plan, pack=pack)
    new = [v for v in result.violations if (v.policy, v.urn, v.message) not in _keys(baseline)]
    assert new, f"{mutate.__name__} went unnoticed"
    assert {v.policy for v in new} == {policy, *also}, "\n".join(v.line() for v in new)
    assert any(v.policy == policy and v.urn.endswith(f"::{culprit}") for v in new), "\n".join(v.line() for v in new)
    level = {name: lvl for name, lvl in result.policies}[policy]
    assert result.exit_code == (1 if level == "mandatory" else baseline.exit_code)


def test_there_are_at_least_fifteen_mutations_over_every_rule():
    assert len(MUTATIONS) >= 15
    from policies.rules import POLICIES

    assert {c[2] for c in CASES} == {p.name for p in POLICIES}
