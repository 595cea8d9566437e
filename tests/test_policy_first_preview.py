"""The whole pack over the shipped stacks' plans as the real engine sees them in a first preview.

``policy_gate.first_preview`` turns an offline plan into what ``pulumi preview`` hands the pack before any
resource exists: inputs flowing from other resources' outputs unknown, and every Kubernetes object's outputs
empty (its provider is not configured while the cluster's endpoint is unknown). Every shipped stack must
pass; every broken plan of tests/test_policy_plans.py must still be refused by the same rule; and eks-dev
with a DRA node group labelled ``nvidia.com/gpu.dra: "false"`` (the device plugin then takes its GPUs)
must be refused by ``dra-reachable-pools-served``.
"""

from __future__ import annotations

import json

import pytest

from policy_gate import run_gate
from policy_gate.first_preview import UNKNOWN
from policy_gate.first_preview import first_preview as _first_preview
from tests.policy_fixtures import shared_pack
from tests.test_policy_plans import CASES, SHIPPED_STACKS, eks_group, plan_of


@pytest.fixture(scope="module")
def pack():
    return shared_pack()


def _level(result, policy: str) -> str:
    return dict(result.policies)[policy]


def _computed(type_: str, name: str, inputs):
    """What the stand-in providers compute (the offline plan's mocks' table, as pulumi_engine.standin uses it)."""
    from offline_plan.mocks import outputs_by_type

    extra = outputs_by_type().get(type_)
    return extra(name, dict(inputs)) if extra else {}


def first_preview(plan):
    return _first_preview(plan, _computed)


_BASELINES: dict[str, object] = {}


def baseline(stack: str, pack):
    if stack not in _BASELINES:
        _BASELINES[stack] = run_gate(first_preview(plan_of(stack)), pack=pack)
    return _BASELINES[stack]


def _new(result, base) -> list:
    seen = {(v.policy, v.urn, v.message) for v in base.violations}
    return [v for v in result.violations if (v.policy, v.urn, v.message) not in seen]


def test_the_transform_marks_what_a_first_preview_cannot_know():
    plan = first_preview(plan_of("dev"))
    states = {s["newState"]["urn"].rsplit("::", 1)[1]: s["newState"] for s in plan["steps"]}
    assert states["nvidia-dra-release"]["inputs"]["namespace"] == UNKNOWN  # a Namespace's output
    assert states["nvidia-dra-release"]["outputs"] == {}  # the Kubernetes provider is not configured
    assert states["gke-k8s"]["inputs"]["kubeconfig"] == UNKNOWN  # built from the cluster's endpoint
    pool = states["a100-80gb-nodepool"]
    assert pool["inputs"]["nodeConfig"]["serviceAccount"] == UNKNOWN  # the service account's e-mail
    assert pool["inputs"]["nodeConfig"]["labels"] and UNKNOWN not in json.dumps(pool["inputs"]["nodeConfig"]["labels"])
    assert pool["inputs"]["cluster"] == "gpu-fungibility"  # the cluster's name, echoed by its provider
    assert pool["outputs"] == pool["inputs"]


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_shipped_stack_passes_its_first_preview(pack, stack):
    result = baseline(stack, pack)
    assert result.resources_checked > 10
    assert result.mandatory == [], "\n".join(v.line() for v in result.mandatory)


@pytest.mark.parametrize(("stack", "mutate", "policy", "also"), CASES, ids=[c[1].__name__ for c in CASES])
def test_a_broken_plan_is_refused_in_its_first_preview_by_the_same_rule(pack, stack, mutate, policy, also):
    plan = plan_of(stack)
    culprit = mutate(plan)
    result = run_gate(first_preview(plan), pack=pack)
    new = _new(result, baseline(stack, pack))
    found = [v for v in new if v.policy == policy and v.urn.endswith(f"::{culprit}")]
    assert found, f"{mutate.__name__} went unnoticed:\n" + "\n".join(v.line() for v in new)
    assert found[0].level == _level(result, policy), "\n".join(v.line() for v in new)


def test_a_dra_group_labelled_gpu_dra_false_is_refused_in_its_first_preview(pack):
    plan = plan_of("eks-dev")
    group = eks_group(plan, "l40s")
    group["inputs"]["labels"]["nvidia.com/gpu.dra"] = "false"
    for offline in (True, False):
        result = run_gate(plan if offline else first_preview(plan), pack=pack)
        refused = [v for v in result.mandatory if v.policy == "dra-reachable-pools-served"]
        assert refused and all(v.urn == group["urn"] for v in refused), "\n".join(v.line() for v in result.violations)


def test_a_pack_that_never_saw_the_inputs_refuses_nothing_it_cannot_know():
    """AnalyzeStack alone, to a pack process that got no Analyze call: every Kubernetes object is unknown whole,
    and what the rules could not judge comes back as advisory, none of it mandatory."""
    from policy_gate.analyzer import PolicyPackProcess, decode_diagnostics
    from policy_gate.gate import Spool, resolve_config

    with PolicyPackProcess() as fresh, Spool.of(first_preview(plan_of("dev"))) as spool:
        fresh.configure(resolve_config(fresh.info(), {}))
        diagnostics = decode_diagnostics(fresh.analyze_stack_encoded(spool.stack_message()))
    assert [d for d in diagnostics if d.level == "mandatory"] == []
    not_judged = {d.policy for d in diagnostics if "not judged until known" in d.message}
    assert {"dra-pool-served", "claim-shape", "gke-dra-driver-install", "dra-reachable-pools-served"} <= not_judged
    assert any("nvidia-dra-release" in d.message for d in diagnostics if d.policy == "dra-pool-served")


def test_the_runtime_as_it_ships_judges_a_first_preview_the_same(monkeypatch, pack):
    """GPU_FUNGIBILITY_GENERIC_POLICY_RUNTIME leaves pulumi-policy's runtime as it ships: the inputs kept for
    AnalyzeStack do not depend on the project's faster decoding."""
    from policies.runtime import GENERIC_RUNTIME_ENV

    plan = plan_of("eks-dev")
    eks_group(plan, "l40s")["inputs"]["labels"]["nvidia.com/gpu.dra"] = "false"
    plan = first_preview(plan)
    monkeypatch.setenv(GENERIC_RUNTIME_ENV, "1")
    generic = run_gate(plan)
    monkeypatch.delenv(GENERIC_RUNTIME_ENV)
    assert {(v.policy, v.urn) for v in generic.mandatory} == {(v.policy, v.urn) for v in run_gate(plan, pack=pack).mandatory}
    assert any(v.policy == "dra-reachable-pools-served" for v in generic.mandatory)


def test_the_broken_fixture_plan_is_refused_for_the_same_rules_with_every_kubernetes_output_unknown(pack):
    """tests/policy_fixtures.broken_gke_plan, its Kubernetes objects previewed through an unconfigured provider."""
    from tests.policy_fixtures import broken_gke_plan

    offline = run_gate(broken_gke_plan(), pack=pack)
    plan = first_preview(broken_gke_plan())
    for step in plan["steps"]:
        if step["newState"]["type"].startswith("kubernetes:"):
            step["newState"]["outputs"] = {}
    preview = run_gate(plan, pack=pack)
    assert {(v.level, v.policy, v.urn) for v in preview.violations} == \
        {(v.level, v.policy, v.urn) for v in offline.violations}
    assert {v.policy for v in preview.mandatory} >= {"dra-device-plugin-isolation", "no-public-inference-endpoint"}
