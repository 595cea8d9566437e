"""The CI workflows gate every shipped stack: offline plan + pack, preview with the pack, up behind approval."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def test_offline_gate_plans_every_stack_without_credentials():
    gate = workflow("offline-gate.yml")
    plan = gate["jobs"]["plan"]
    assert sorted(plan["strategy"]["matrix"]["stack"]) == STACKS
    step = next(s for s in plan["steps"] if "make plan" in s.get("run", ""))
    assert step["run"] == 'make plan STACK="$STACK"' and step["env"]["STACK"] == "${{ matrix.stack }}"
    text = (WORKFLOWS / "offline-gate.yml").read_text()
    assert "secrets." not in text and "id-token" not in text
    assert any("make test" in step.get("run", "") for step in gate["jobs"]["test"]["steps"])


def test_pull_requests_preview_every_stack_with_the_pack_and_comment():
    pr = workflow("pull-request.yml")
    preview = pr["jobs"]["preview"]
    assert sorted(i["stack"] for i in preview["strategy"]["matrix"]["include"]) == STACKS
    assert preview["with"]["command"] == "preview"
    assert preview["needs"] == "offline-gate"
    step = next(s for s in workflow("pulumi-stack.yml")["jobs"]["pulumi"]["steps"]
                if str(s.get("uses", "")).startswith("pulumi/actions@"))
    assert step["with"]["policyPacks"] == "policies"
    assert step["with"]["comment-on-pr"] == "${{ inputs.command == 'preview' }}"


def test_main_applies_every_stack_behind_its_environment():
    jobs = workflow("main.yml")["jobs"]
    ups = {job["with"]["stack"]: job for name, job in jobs.items() if name.startswith("up-")}
    assert sorted(ups) == STACKS
    for stack, job in ups.items():
        assert job["with"]["command"] == "up" and job["with"]["environment"] == stack
    assert ups["prod"]["needs"] == "up-dev"
    assert workflow("pulumi-stack.yml")["jobs"]["pulumi"]["environment"] == "${{ inputs.environment }}"
