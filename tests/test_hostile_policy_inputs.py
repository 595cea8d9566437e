"""Hostile input to the policy gate and the pack: deep or broken files are exit 2, broken objects never pass."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pulumi_policy.proxy import UnknownValueError

from policies.rules.security import validate_secrets_from_secret_store
from policy_gate.analyzer import PackInfo, PolicyDescription
from policy_gate.gate import GateError, resolve_config
from tests.hang_guard import HANG_GUARD_SECONDS
from tests.policy_fixtures import Collector, find, gke_stack, resource_args, run_resource_rule

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent

#: (id, (file content, words of the one-line error))
HOSTILE_PLAN_FILES = {
    "deep-100000": ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    "deep-inputs": ('{"steps": [{"newState": {"inputs": ' + '{"a": ' * 120 + "1" + "}" * 120 + "}}]}",
                    "nested too deep"),
    "binary": ("\0\x01\x02", "binary file"),
    "truncated": ('{"steps": [{"op": "create", "newState": ', "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_PLAN_FILES))
def test_policy_gate_refuses_a_hostile_plan_file_with_exit_2(tmp_path, case):
    content, reason = HOSTILE_PLAN_FILES[case]
    plan = tmp_path / "plan.json"
    plan.write_text(content)
    done = subprocess.run([sys.executable, "-m", "policy_gate", str(plan)], cwd=ROOT, capture_output=True,
                          text=True, timeout=HANG_GUARD_SECONDS)
    assert done.returncode == 2, done.stderr
    assert str(plan) in done.stderr and reason in done.stderr and "Traceback" not in done.stderr


def test_policy_gate_refuses_a_deep_policy_config(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text('{"steps": []}')
    config = tmp_path / "config.json"
    config.write_text("[" * 50_000 + "]" * 50_000)
    done = subprocess.run([sys.executable, "-m", "policy_gate", str(plan), "--policy-config", str(config)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert done.returncode == 2 and "nested too deep" in done.stderr and "Traceback" not in done.stderr


INFO = PackInfo("pack", "1", (
    PolicyDescription("pinned-charts", "", "mandatory", "resource"),
    PolicyDescription("accelerator-pools-spot", "", "advisory", "resource", config_properties=("onDemandPools",)),
), {})


def test_policy_config_reports_every_problem_at_once():
    config = {"no-such-rule": "advisory", "all": "blocking", "pinned-charts": 3,
              "accelerator-pools-spot": {"enforcementLevel": "loud", "onDemandPool": ["x"]}}
    with pytest.raises(GateError) as caught:
        resolve_config(INFO, config)
    message = str(caught.value)
    assert "5 problems" in message
    for words in ("unknown policies: no-such-rule", "all: enforcement level", "pinned-charts: expected a level",
                  "accelerator-pools-spot.enforcementLevel", "unknown properties onDemandPool"):
        assert words in message


def test_a_valid_policy_config_resolves():
    resolved = resolve_config(INFO, {"all": "advisory", "accelerator-pools-spot": {"onDemandPools": ["p"]}})
    assert resolved["pinned-charts"] == ("advisory", {})
    assert resolved["accelerator-pools-spot"] == ("advisory", {"onDemandPools": ["p"]})


#: A workload whose pod spec cannot be read: (id, (path to replace, value)).
BROKEN_WORKLOADS = {
    "spec-string": (("spec",), "replicas: 3"),
    "spec-list": (("spec",), [1, 2]),
    "template-string": (("spec", "template"), "x"),
    "pod-spec-number": (("spec", "template", "spec"), 7),
}


@pytest.mark.parametrize("case", sorted(BROKEN_WORKLOADS))
def test_a_deployment_whose_spec_is_not_an_object_never_passes(case):
    path, value = BROKEN_WORKLOADS[case]
    stack = gke_stack()
    node = find(stack, "vllm-gpu").props
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    found = run_resource_rule(validate_secrets_from_secret_store, stack)
    assert len(found.violations) == 1
    assert "not an object" in found.messages[0] and ".".join(path) in found.messages[0]


def test_a_spec_unknown_during_preview_is_not_a_violation():
    """Not judged until known: an advisory (the runtime reports the UnknownValueError so), never a violation."""
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"] = "[unknown]"
    found = Collector()
    with pytest.raises(UnknownValueError, match="not judged until known: the pod spec of Deployment vllm-gpu"):
        validate_secrets_from_secret_store(resource_args(find(stack, "vllm-gpu")), found)
    assert found.violations == []
