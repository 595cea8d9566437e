"""The offline gate: the real pack, started as a subprocess, driven over its Analyzer gRPC service."""

import json
import re
import subprocess
import sys

import pytest

from policy_gate import GateError, PolicyPackProcess, render_markdown, run_gate
from policy_gate.analyzer import ROOT
from policy_gate.plan import plan_resources
from tests.hang_guard import HANG_GUARD_SECONDS
from tests.policy_fixtures import broken_gke_plan, eks_stack, find, gke_stack, shared_pack, to_plan

EXPECTED_LEVELS = {
    "dra-device-plugin-isolation": "mandatory", "dra-pool-served": "mandatory", "dra-kubernetes-version": "mandatory",
    "gke-dra-driver-install": "mandatory", "gke-critical-priority-quota": "mandatory", "claim-shape": "mandatory",
    "claim-follows-compute-class": "mandatory", "preference-follows-claim": "mandatory",
    "accelerator-pools-spot": "advisory",
    "no-public-inference-endpoint": "mandatory", "secrets-from-secret-store": "mandatory",
    "pinned-charts": "mandatory", "eks-dra-scale-from-zero": "advisory", "aks-dra-pool-size": "advisory",
    "dra-reachable-pools-served": "mandatory", "claim-alternative-satisfiable": "mandatory",
    "serving-requests-fit-nodes": "mandatory",
    "control-plane-reachable": "mandatory",
    "kubernetes-version-supported": "mandatory", "kubernetes-version-advisories": "advisory",
}


@pytest.fixture(scope="session")
def pack() -> PolicyPackProcess:
    return shared_pack()


def test_analyzer_info_lists_every_rule_with_its_level(pack):
    info = pack.info()
    assert info.name == "gpu-fungibility-policies"
    assert info.version == "0.2.0"  # PulumiPolicy.yaml's version, as the CLI reports it
    assert {p.name: p.level for p in info.policies} == EXPECTED_LEVELS
    kinds = {p.name: p.kind for p in info.policies}
    assert kinds["dra-device-plugin-isolation"] == "stack" and kinds["pinned-charts"] == "resource"


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
def test_seed_shaped_plans_pass(pack, stack):
    result = run_gate(to_plan(stack()), pack=pack)
    assert result.violations == []
    assert result.exit_code == 0
    assert result.resources_checked == len(stack()) + 1  # + the root Stack


def test_violations_carry_level_policy_urn_and_message(pack):
    result = run_gate(broken_gke_plan(), pack=pack)
    assert result.exit_code == 1
    found = {(v.level, v.policy, v.urn.rsplit("::", 1)[-1]) for v in result.violations}
    assert found == {
        ("mandatory", "dra-device-plugin-isolation", "a100-40gb-pool"),  # stack policy, reported on the pool
        ("mandatory", "dra-reachable-pools-served", "a100-40gb-pool"),  # the claim reaches that pool too
        ("mandatory", "no-public-inference-endpoint", "vllm-tpu-svc"),  # resource policy: the analyzed URN
        ("advisory", "accelerator-pools-spot", "a100-80gb-pool"),
    }
    isolation = result.of_policy("dra-device-plugin-isolation")[0]
    assert isolation.line().startswith("[mandatory] dra-device-plugin-isolation  urn:pulumi:test::")
    assert "GKE's default NVIDIA device plugin" in isolation.message
    assert "\n" not in isolation.line()
    assert [v.level for v in result.violations] == ["mandatory", "mandatory", "mandatory", "advisory"]


def test_advisory_only_exits_zero(pack):
    stack = gke_stack()
    del find(stack, "a100-80gb-pool").props["nodeConfig"]["labels"]["gpu-fungibility/on-demand-fallback"]
    result = run_gate(to_plan(stack), pack=pack)
    assert [v.policy for v in result.violations] == ["accelerator-pools-spot"] and result.exit_code == 0


def test_policy_config_overrides_levels_and_passes_properties(pack, tmp_path):
    plan = broken_gke_plan()
    assert run_gate(plan, {"all": "advisory"}, pack=pack).exit_code == 0
    result = run_gate(plan, {"dra-device-plugin-isolation": "disabled", "dra-reachable-pools-served": "disabled",
                             "no-public-inference-endpoint": {"allowedPublicServices": ["inference/vllm-tpu"]},
                             "accelerator-pools-spot": {"enforcementLevel": "mandatory"}}, pack=pack)
    assert [(v.level, v.policy) for v in result.violations] == [("mandatory", "accelerator-pools-spot")]
    assert dict(result.policies)["dra-device-plugin-isolation"] == "disabled"
    config_file = tmp_path / "policy-config.json"
    config_file.write_text(json.dumps({"accelerator-pools-spot": "disabled"}))
    assert run_gate(plan, config_file, pack=pack).of_policy("accelerator-pools-spot") == []
    # Configure is per run: the next run without config is back to the pack's levels.
    assert run_gate(plan, pack=pack).exit_code == 1


@pytest.mark.parametrize(("config", "message"), [
    ({"no-such-rule": "advisory"}, "unknown policies: no-such-rule"),
    ({"all": "blocking"}, "enforcement level must be one of"),
    ({"pinned-charts": 3}, "expected a level or an object"),
])
def test_bad_policy_config(pack, config, message):
    with pytest.raises(GateError, match=message):
        run_gate(to_plan(gke_stack()), config, pack=pack)


def test_render_markdown(pack):
    markdown = render_markdown(run_gate(broken_gke_plan(), pack=pack))
    assert markdown.startswith("### Policy pack `gpu-fungibility-policies` 0.2.0: **failed**")
    assert "| `dra-device-plugin-isolation` | mandatory | 1 violation(s) |" in markdown
    assert "| `pinned-charts` | mandatory | pass |" in markdown
    assert "- **[advisory] accelerator-pools-spot** `urn:pulumi:test::" in markdown
    clean = render_markdown(run_gate(to_plan(gke_stack()), pack=pack))
    assert ": passed" in clean and "Violations" not in clean


def test_real_preview_fields_are_tolerated():
    plan = to_plan(gke_stack())
    provider_urn = "urn:pulumi:test::gpu-fungibility::pulumi:providers:kubernetes::k8s"
    plan["steps"].insert(1, {"op": "same", "urn": provider_urn, "newState": {
        "urn": provider_urn, "type": "pulumi:providers:kubernetes", "custom": True, "id": "abc",
        "inputs": {"kubeconfig": "[secret]"}, "outputs": {"kubeconfig": "[secret]"}}})
    deployment = next(s for s in plan["steps"] if s["urn"].endswith("::vllm-gpu"))
    deployment["newState"]["provider"] = f"{provider_urn}::abc"
    deployment["newState"]["outputs"] = {"status": {}}
    deployment["detailedDiff"] = {}
    plan["steps"].append({"op": "delete", "urn": "urn:pulumi:test::gpu-fungibility::kubernetes:core/v1:Service::old",
                          "oldState": {"type": "kubernetes:core/v1:Service", "inputs": {}}})
    plan.update({"config": {}, "duration": 1234, "changeSummary": {"create": 3, "same": 1, "delete": 1}})
    resources = plan_resources(plan)
    assert not any(r.name == "old" for r in resources)
    assert next(r for r in resources if r.name == "vllm-gpu").provider == f"{provider_urn}::abc"


def test_a_run_without_a_shared_pack_stops_its_process():
    with PolicyPackProcess() as started:
        assert started.process.poll() is None
        assert started.info().name == "gpu-fungibility-policies"
    assert started.process.poll() is not None


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "policy_gate", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=HANG_GUARD_SECONDS)


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ('["steps"]', "expected a JSON object"),
    ('{"steps": 3}', "no 'steps' list"),
    ('{"steps": [{"op": "create", "newState": {"type": "x"}}]}', "steps[0] has no resource URN"),
    ('{"steps": [{"op": "create", "urn": "urn:pulumi:s::p::t::n", "newState": {"inputs": []}}]}', "inputs is not an object"),
])
def test_malformed_plans_are_refused_with_the_reason(tmp_path, content, message):
    plan = tmp_path / "plan.json"
    plan.write_text(content)
    with pytest.raises(GateError, match=re.escape(message)):
        run_gate(plan)


def test_malformed_plan_is_a_one_line_error_with_exit_2(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text('{"steps": [{"op": "create", "newState": ')
    done = run_cli(str(plan))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "not valid JSON" in done.stderr and "Traceback" not in done.stderr


def test_missing_plan_and_missing_config(tmp_path):
    done = run_cli(str(tmp_path / "absent.json"))
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(to_plan(gke_stack())))
    done = run_cli(str(plan), "--policy-config", str(tmp_path / "absent-config.json"))
    assert done.returncode == 2 and "no such policy config file" in done.stderr


@pytest.mark.parametrize(("name", "problem"), [("absent.json", "no such file"), (".", "is a directory")])
def test_unreadable_plan_path_says_which_files_are_accepted(tmp_path, name, problem):
    with pytest.raises(GateError, match=re.escape(f"{problem}; give a plan file: build/<stack>/plan.json")):
        run_gate(tmp_path / name)


def test_cli_prints_one_line_per_violation_and_fails_on_mandatory(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(broken_gke_plan()))
    done = run_cli(str(plan))
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 4
    assert lines[0].startswith("[mandatory] dra-device-plugin-isolation  urn:pulumi:test::gpu-fungibility::")
    assert lines[3].startswith("[advisory] accelerator-pools-spot  urn:")
    assert "3 mandatory, 1 advisory" in done.stderr


def test_values_unknown_in_a_real_preview_give_advisories_not_verdicts(pack):
    from pulumi_policy.proxy import UNKNOWN_OBJECT_VALUE

    stack = gke_stack()
    find(stack, "tpu-dra").props["values"] = UNKNOWN_OBJECT_VALUE  # as `pulumi preview --json` shows it
    result = run_gate(to_plan(stack), pack=pack)
    assert result.exit_code == 0
    assert result.violations and all(v.level == "advisory" for v in result.violations)
    assert all("can't run policy" in v.message and "during preview" in v.message for v in result.violations)
    assert "dra-pool-served" in {v.policy for v in result.violations}


def test_the_gate_loads_neither_the_policy_runtime_nor_its_patch():
    """The gate shares only the batch call's framing with the pack (policies/wire.py): starting it loads
    neither pulumi-policy nor policies/runtime.py, which patches pulumi-policy's private internals."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, policy_gate, policy_gate.analyzer, policy_gate.gate, policy_gate.__main__;"
         "print(sorted(m for m in sys.modules if m.startswith(('policies', 'pulumi_policy'))))"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=HANG_GUARD_SECONDS).stdout
    assert loaded.strip() == "['policies', 'policies.wire']"
