"""The CI workflows gate every shipped stack: offline plan + pack, preview with the pack, up behind approval.

A user's own ``Pulumi.<stack>.yaml`` is not checked here (it never fails ``make test``): ``make lint`` runs
tools/stacks_in_ci.py, which names what to add to which workflow for it.
"""

import shutil
from pathlib import Path

import yaml

from tools import stacks_in_ci
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
STACKS = list(SHIPPED_STACKS)  # a user's own Pulumi.<stack>.yaml is not the tests' business


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


def test_every_shipped_stack_has_its_file():
    assert [s for s in STACKS if not (ROOT / f"Pulumi.{s}.yaml").is_file()] == []


def _project_with(tmp_path: Path, extra: dict[str, str]) -> Path:
    """A project folder with the shipped workflows and stack files, plus ``extra`` stack files."""
    shutil.copytree(WORKFLOWS, tmp_path / ".github" / "workflows")
    for stack in STACKS:
        shutil.copy(ROOT / f"Pulumi.{stack}.yaml", tmp_path)
    for stack, text in extra.items():
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(text)
    return tmp_path


def test_the_stack_lint_passes_on_the_shipped_stacks(tmp_path, capsys):
    assert stacks_in_ci.main(["--root", str(_project_with(tmp_path, {}))]) == 0
    assert capsys.readouterr().err == ""


def test_the_stack_lint_tells_a_user_what_to_add_for_their_own_stack(tmp_path, capsys):
    """A user's Pulumi.acme-gke.yaml: make test stays green, make lint names each workflow file and the lines."""
    text = (ROOT / "examples" / "stacks" / "Pulumi.my-gke.yaml").read_text()
    assert stacks_in_ci.main(["--root", str(_project_with(tmp_path, {"acme-gke": text}))]) == 1
    err = capsys.readouterr().err
    assert "Pulumi.acme-gke.yaml is not gated by .github/workflows/offline-gate.yml" in err
    assert "matrix.stack: add acme-gke" in err
    assert "Pulumi.acme-gke.yaml is not gated by .github/workflows/pull-request.yml" in err
    assert "- {stack: acme-gke, cloud: gke}" in err
    assert "Pulumi.acme-gke.yaml is not gated by .github/workflows/main.yml" in err
    assert "up-acme-gke:" in err and "with: {stack: acme-gke, cloud: gke, command: up, environment: acme-gke}" in err
    assert "Pulumi.dev.yaml" not in err


def test_the_stack_lint_text_once_added_gates_the_stack(tmp_path, capsys):
    """What the lint says to add is valid workflow YAML the lint then accepts."""
    root = _project_with(tmp_path, {"acme": "config:\n  gpu-fungibility:cluster: {cloud: eks}\n"})
    gate = root / stacks_in_ci.OFFLINE_GATE
    gate.write_text(gate.read_text().replace("stack: [dev, eks-dev, prod, aks-dev]", "stack: [dev, eks-dev, prod, aks-dev, acme]"))
    pr = root / stacks_in_ci.PULL_REQUEST
    pr.write_text(pr.read_text().replace("          - {stack: aks-dev, cloud: aks}\n",
                                         "          - {stack: aks-dev, cloud: aks}\n"
                                         + stacks_in_ci.what_to_add("acme", "eks", stacks_in_ci.PULL_REQUEST)
                                         .split("\n", 1)[1] + "\n"))
    main = root / stacks_in_ci.MAIN
    job = stacks_in_ci.what_to_add("acme", "eks", stacks_in_ci.MAIN).split("\n", 1)[1]
    main.write_text(main.read_text() + "\n" + job + "\n")
    assert stacks_in_ci.main(["--root", str(root)]) == 0, capsys.readouterr().err
    assert workflow_at(main)["jobs"]["up-acme"]["with"]["environment"] == "acme"


def workflow_at(path: Path) -> dict:
    return yaml.safe_load(path.read_text())
