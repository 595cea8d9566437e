"""Every broken plan the policy tests refuse offline, refused by the real engine's pack for the same rule.

tests/test_policy_plans.py breaks a shipped stack's plan one way per rule (a pool's label dropped, a claim's
selector broken, a class reversed) and checks the offline gate names the right rule at the culprit. Here each
broken plan is replayed through Pulumi's own engine (pulumi_engine.replay: the same URNs, inputs, providers and
parents, the explicit Kubernetes provider unconfigured as in a first preview) with the pack loaded by the CLI,
and the rule must be reported there too, on the same resource, at its level.
"""

from __future__ import annotations

import pytest

from pulumi_engine import compare, replay
from pulumi_engine.preview import preview
from tests.test_policy_plans import CASES, plan_of


def _replay(engine_tools, tmp_path, stack: str, plan: dict):
    empty = tmp_path / f"Pulumi.{stack}.yaml"
    empty.write_text("config: {}\n")
    return preview(stack, "first", tools=engine_tools, out=tmp_path / "engine", stack_file=empty,
                   program=replay.program(plan))


@pytest.mark.parametrize("stack", sorted({c[0] for c in CASES}))
def test_a_replayed_shipped_plan_is_the_plan_and_passes_the_pack(engine_tools, tmp_path, stack):
    plan = plan_of(stack)
    run = _replay(engine_tools, tmp_path, stack, plan)
    assert run.ok and not run.mandatory, [e.get("message") for e in run.mandatory] or run.stderr[-2000:]
    assert compare.differences(plan, run.preview) == []


@pytest.mark.parametrize(("stack", "mutate", "policy", "also"), CASES, ids=[c[1].__name__ for c in CASES])
def test_a_broken_plan_is_refused_by_the_real_engine_for_the_rule_the_offline_gate_names(
        engine_tools, tmp_path, stack, mutate, policy, also):
    plan = plan_of(stack)
    culprit = mutate(plan)
    run = _replay(engine_tools, tmp_path, stack, plan)
    reported = [e for e in run.policy_events if e.get("policyName") == policy]
    where = "\n".join(f"{e.get('enforcementLevel')} {e.get('policyName')} {e.get('resourceUrn')}: "
                      f"{(e.get('message') or '')[:200]}" for e in run.policy_events) or run.stderr[-2000:]
    assert reported, f"{mutate.__name__}: the real engine's pack did not report {policy}:\n{where}"
    assert any((e.get("resourceUrn") or "").endswith(f"::{culprit}") for e in reported), where
