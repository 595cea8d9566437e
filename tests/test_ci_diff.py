"""Pull requests (forks included) get the offline diff as one comment, posted without running their code."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
MARKER = "<!-- gpu-fungibility-offline-diff -->"


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def test_the_gate_diffs_every_stack_against_the_base_branch_on_pull_requests():
    job = workflow("offline-gate.yml")["jobs"]["diff"]
    assert job["if"] == "github.event_name == 'pull_request'"
    checkout = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    script = next(s["run"] for s in job["steps"] if "run" in s)
    assert "for file in Pulumi.*.yaml" in script, "every stack the repository has"
    assert 'make -s diff STACK="$stack" BASE="origin/$BASE_REF"' in script
    assert job["env"]["BASE_REF"] == "${{ github.base_ref }}", "passed through env, not spliced into the script"
    assert MARKER in script and "pr-number" in script and "head-sha" in script
    upload = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "offline-diff"


def test_the_comment_workflow_never_runs_pull_request_code_and_edits_its_own_comment():
    text = (WORKFLOWS / "offline-diff-comment.yml").read_text()
    wf = workflow("offline-diff-comment.yml")
    trigger = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads a bare `on` as True
    assert trigger["workflow_run"] == {"workflows": ["pull-request"], "types": ["completed"]}
    assert workflow("pull-request.yml")["name"] == "pull-request"
    job = wf["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert "actions/checkout" not in text, "the pull request's code is never checked out here"
    assert not any("run" in step for step in job["steps"]), "no shell over the artifact's contents"
    download = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact@"))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    script = next(s["with"]["script"] for s in job["steps"] if str(s.get("uses", "")).startswith(
        "actions/github-script@"))
    assert MARKER in script and "pr.head.sha !== run.head_sha" in script
    assert "updateComment" in script and "createComment" in script and "github-actions[bot]" in script
