"""The shipped stacks plan to the same resources with the same inputs as before the library moved.

A resource whose URN changed (a component's type token, and with it its
children's URNs) must carry an alias to its old URN, so `pulumi up` on an
existing stack updates in place instead of deleting and recreating a cluster or
a GPU pool.
"""

import hashlib
import json
from pathlib import Path

import pytest

from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file

FIXTURE = Path(__file__).with_name("fixtures") / "shipped_plans.json"
STACKS = ("dev", "eks-dev", "prod", "aks-dev")


def fingerprint(document: dict) -> list[dict]:
    entries = []
    for step in document["steps"]:
        state = step["newState"]
        digest = hashlib.sha256(json.dumps(state.get("inputs") or {}, sort_keys=True).encode()).hexdigest()[:16]
        entries.append({"urn": state["urn"], "custom": state.get("custom", True), "inputs": digest,
                        "aliases": list(state.get("aliases") or [])})
    return entries


@pytest.mark.parametrize("stack", STACKS)
def test_the_shipped_stack_plans_the_same_resources_with_the_same_inputs(stack):
    before = {e["urn"]: e for e in json.loads(FIXTURE.read_text())["stacks"][stack]}
    now = fingerprint(plan_document(run_stack_file(stack)))
    matched, problems = set(), []
    for entry in now:
        old_urn = entry["urn"] if entry["urn"] in before else next(
            (a for a in entry["aliases"] if a in before), None)
        if old_urn is None:
            problems.append(f"new resource (no old URN or alias matches): {entry['urn']}")
            continue
        matched.add(old_urn)
        if entry["custom"] and entry["inputs"] != before[old_urn]["inputs"]:
            problems.append(f"inputs changed: {entry['urn']}")
    problems += [f"no longer planned: {urn}" for urn in before if urn not in matched]
    assert not problems, "\n".join(problems)


def test_a_component_that_moved_is_aliased_to_its_old_type():
    document = plan_document(run_stack_file("dev"))
    pools = [s["newState"] for s in document["steps"] if s["newState"]["type"] == "gpu-fungibility:index:GkeGpuNodePool"]
    assert pools
    for pool in pools:
        name = pool["urn"].rsplit("::", 1)[1]
        assert f"urn:pulumi:dev::gpu-fungibility::gpu-fungibility:gke_pools:GkeGpuNodePool::{name}" \
            in pool["aliases"]


def test_a_stack_imports_only_its_own_clouds_provider_sdk():
    import subprocess
    import sys

    probe = ("import sys\nfrom offline_plan.run import run_stack_file\nrun_stack_file('dev')\n"
             "print('pulumi_aws' in sys.modules, 'pulumi_gcp' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, check=True)
    assert result.stdout.split()[-2:] == ["False", "True"], result.stdout
