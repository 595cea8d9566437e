"""The one pool list also orders the scheduler's choice among running nodes: weights, the stack's terms, the rule."""

from __future__ import annotations

import pytest
from gpu_fungibility.workload import preference_weights, preferred_terms, workload_issues

from offline_plan.run import read_stack_file
from policies.rules.preference import validate_preference_follows_claim
from stacks import arguments
from stacks.loader import parse_stack_config
from tests.policy_fixtures import eks_stack, find, gke_stack, preferred_pools, run_stack_rule


@pytest.mark.parametrize(("count", "weights"), [
    (1, [0]), (2, [100, 0]), (3, [100, 1, 0]), (4, [100, 10, 1, 0]), (8, [100, 46, 22, 10, 5, 2, 1, 0]),
])
def test_weights_fall_from_100_and_the_last_pool_gets_none(count, weights):
    assert preference_weights(count) == weights


@pytest.mark.parametrize("count", range(2, 9))
def test_the_best_running_pool_outscores_the_next_by_at_least_100_points(count):
    """NodeAffinity normalises to the best feasible node (100) and weighs 2: the gap is 200 * (1 - next/best)."""
    weights = preference_weights(count)
    assert all(1 <= w <= 100 for w in weights[:-1])
    for best, following in zip(weights, weights[1:], strict=False):
        assert 200 * (best - following) // best >= 100


def _cfg(stack: str):
    return parse_stack_config(read_stack_file(stack).namespace_config)


@pytest.mark.parametrize("stack", ["eks-dev", "aks-dev", "prod", "dev"])
def test_the_stack_derives_the_terms_from_the_compute_class_list(stack):
    cfg = _cfg(stack)
    planned = arguments.workload(cfg, "vllm-gpu")
    pools = cfg.compute_classes[cfg.workloads["vllm-gpu"].compute_class].pools
    preference = planned.args["pool_preference"]
    assert [p["name"] for p in preference] == list(pools)
    specs = arguments.pool_specs(cfg)
    label = {"eks": "eks.amazonaws.com/nodegroup", "aks": "kubernetes.azure.com/agentpool",
             "gke": "cloud.google.com/gke-nodepool"}[cfg.cluster.cloud]
    assert [p["node_labels"] for p in preference] == [{label: specs[p].name} for p in pools]
    terms = preferred_terms(preference)
    assert [t["weight"] for t in terms] == preference_weights(len(pools))[:-1]


def test_a_single_pool_workload_gets_no_preference():
    cfg = _cfg("dev")
    assert "pool_preference" not in arguments.workload(cfg, "vllm-tpu").args


def test_pools_without_labels_or_twice_are_refused():
    args = {"accelerator_family": "gpu", "namespace": "inference", "model": "m", "claim": {"template_name": "t"},
            "pool_preference": [{"name": "a", "node_labels": {"k": "a"}}, {"name": "b", "node_labels": {}},
                                {"name": "c", "node_labels": {"k": "a"}}]}
    fields = [field for field, _ in workload_issues(args)]
    assert fields == ["pool_preference[1].node_labels", "pool_preference[2]"]


# ---- preference-follows-claim ----------------------------------------------------------------------


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
def test_weights_that_follow_the_claim_pass(stack):
    assert run_stack_rule(validate_preference_follows_claim, stack()).violations == []


def test_no_preferred_affinity_is_a_violation_naming_the_pools():
    stack = eks_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"].pop("affinity")
    found = run_stack_rule(validate_preference_follows_claim, stack)
    assert found.violations == [(found.messages[0], find(stack, "vllm-gpu").urn)]
    assert "[a100 (0), l4 (0)]" in found.messages[0]


def test_weights_against_the_claim_order_are_a_violation():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["affinity"] = preferred_pools(
        "cloud.google.com/gke-nodepool", [("a100-80gb", 10), ("a100-40gb", 50)])
    found = run_stack_rule(validate_preference_follows_claim, stack)
    assert len(found.violations) == 1 and "[a100-80gb (10), a100-40gb (50)]" in found.messages[0]


def test_equal_weights_are_a_violation():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["affinity"] = preferred_pools(
        "cloud.google.com/gke-nodepool", [("a100-80gb", 50), ("a100-40gb", 50)])
    assert len(run_stack_rule(validate_preference_follows_claim, stack).violations) == 1


def test_a_term_on_a_label_every_pool_carries_does_not_count_as_a_preference():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["affinity"] = preferred_pools(
        "nvidia.com/gpu.dra", [("true", 100)])
    assert len(run_stack_rule(validate_preference_follows_claim, stack).violations) == 1
