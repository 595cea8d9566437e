"""The workflows that hold cloud credentials: actions pinned by digest, no persisted token, least permissions.

zizmor (``make lint``, offline) audits the same files; these tests keep the project's own rules that it
does not state the same way: every action by full commit digest with its version in a comment (what
Renovate's digest pinning keeps current), one digest per action across the files, a reason beside every
suppressed zizmor finding, the Pulumi token only in the steps that use it.
"""

import re
from pathlib import Path

import pytest
import yaml

from tools.lock import LOCKS

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<rest>.*)$")
PINNED = re.compile(r"^(?P<action>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?)@(?P<sha>[0-9a-f]{40})$")
VERSION_COMMENT = re.compile(r"^\s+# (?P<version>v\d+\.\d+(?:\.\d+)?)\s*$")
IGNORE = re.compile(r"# zizmor: ignore\[(?P<rules>[a-z0-9-]+(?:,[a-z0-9-]+)*)\](?P<why>.*)$")


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def uses_lines() -> list[tuple[str, int, str, str]]:
    """(file, line, reference, rest of the line) for every ``uses:`` of every workflow."""
    found = []
    for path in WORKFLOWS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := USES.match(line):
                found.append((path.name, number, match["ref"], match["rest"]))
    return found


def steps(workflow: dict):
    for name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield name, step


def test_every_action_is_pinned_by_full_digest_with_its_version():
    remote = [(f, n, ref, rest) for f, n, ref, rest in uses_lines() if not ref.startswith("./")]
    assert len(remote) >= 20, remote
    bad = [f"{f}:{n}: {ref}{rest}" for f, n, ref, rest in remote
           if not PINNED.match(ref) or not VERSION_COMMENT.match(rest)]
    assert bad == [], "actions not pinned as <owner>/<repo>@<40 hex> # vX.Y.Z:\n" + "\n".join(bad)


def test_each_action_has_one_digest_and_one_version_everywhere():
    seen: dict[str, set[tuple[str, str]]] = {}
    for _, _, ref, rest in uses_lines():
        if match := PINNED.match(ref):
            seen.setdefault(match["action"], set()).add((match["sha"], VERSION_COMMENT.match(rest)["version"]))
    assert {a: pins for a, pins in seen.items() if len(pins) != 1} == {}


def test_local_references_are_the_repositorys_own_reusable_workflows():
    local = {ref for _, _, ref, _ in uses_lines() if ref.startswith("./")}
    assert local and all((ROOT / ref).is_file() for ref in local), local


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_checkout_leaves_the_token_in_git_config(path):
    workflow = load(path)
    for job, step in steps(workflow):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert (step.get("with") or {}).get("persist-credentials") is False, f"{path.name}: {job}"
        assert "git push" not in step.get("run", ""), f"{path.name}: {job} pushes; it needs its own token"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_expression_is_expanded_into_a_shell_script(path):
    for job, step in steps(load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: {job}: pass the value through env:"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_write_permission_says_why(path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if re.match(r"^\s+[a-z-]+:\s*write\b", line):
            assert "#" in line, f"{path.name}:{number}: a write permission without its reason"
        assert "write-all" not in line, f"{path.name}:{number}"


def test_workflows_declare_their_permissions_except_the_reusable_pulumi_one():
    for path in WORKFLOWS:
        workflow = load(path)
        if path.name == "pulumi-stack.yml":
            # The callers' grants are the job's permissions (see the file's comment and docs/ci.md).
            assert "permissions" not in workflow
            assert all("permissions" not in job for job in workflow["jobs"].values())
        else:
            assert "permissions" in workflow, path.name


def test_up_gets_no_write_access_to_the_repository_and_preview_only_what_it_comments_with():
    main = load(ROOT / ".github" / "workflows" / "main.yml")["jobs"]
    for name, job in main.items():
        if name.startswith("up-"):
            assert job["permissions"] == {"contents": "read", "id-token": "write"}, name
    preview = load(ROOT / ".github" / "workflows" / "pull-request.yml")["jobs"]["preview"]
    assert preview["permissions"] == {"contents": "read", "id-token": "write", "pull-requests": "write"}
    comment = load(ROOT / ".github" / "workflows" / "offline-diff-comment.yml")
    assert comment["permissions"] == {}
    assert comment["jobs"]["comment"]["permissions"] == {"actions": "read", "pull-requests": "write"}


def test_the_pulumi_token_reaches_only_the_steps_that_talk_to_the_backend():
    workflow = load(ROOT / ".github" / "workflows" / "pulumi-stack.yml")
    job = workflow["jobs"]["pulumi"]
    assert "PULUMI_ACCESS_TOKEN" not in (job.get("env") or {}) and "PULUMI_ACCESS_TOKEN" not in workflow.get("env", {})
    holders = [step.get("name", step.get("uses")) for step in job["steps"]
               if "PULUMI_ACCESS_TOKEN" in (step.get("env") or {})]
    assert len(holders) == 2, holders
    assert any(str(s.get("uses", "")).startswith("pulumi/actions@") and "PULUMI_ACCESS_TOKEN" in s.get("env", {})
               for s in job["steps"])


def test_every_zizmor_suppression_gives_its_reason():
    found = []
    for path in WORKFLOWS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := IGNORE.search(line):
                found.append((path.name, match["rules"]))
                assert len(match["why"].strip()) >= 20, f"{path.name}:{number}: a suppression without its reason"
    # The two decisions docs/ci.md explains; anything new needs the same.
    assert sorted(found) == [("offline-diff-comment.yml", "dangerous-triggers"),
                             ("pulumi-stack.yml", "excessive-permissions")]


def test_the_workflow_run_decision_is_recorded():
    text = (ROOT / ".github" / "workflows" / "offline-diff-comment.yml").read_text()
    assert "workflow_run" in text and "docs/ci.md" in text
    doc = (ROOT / "docs" / "ci.md").read_text()
    assert "## The workflow_run decision" in doc


def test_zizmor_is_locked_and_runs_offline_in_make_lint_and_the_gate():
    pin = (ROOT / "tools" / "zizmor-requirements.in").read_text()
    assert re.search(r"^zizmor==\d+\.\d+\.\d+$", pin, re.MULTILINE)
    assert any(lock.source == "tools/zizmor-requirements.in" and lock.output == "tools/zizmor-requirements.txt"
               for lock in LOCKS)
    lock = (ROOT / "tools" / "zizmor-requirements.txt").read_text()
    version = re.search(r"^zizmor==(\S+)$", pin, re.MULTILINE)[1]
    assert f"zizmor=={version} \\" in lock and "--hash=sha256:" in lock
    makefile = (ROOT / "Makefile").read_text()
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert lint and "zizmor" in lint[0]
    command = next(line for line in lint[1].splitlines() if "zizmor" in line)
    assert "--offline" in command and "--min-severity=medium" in command and ".github/workflows" in command
    assert "--require-hashes" in makefile and "tools/zizmor-requirements.txt" in makefile
    gate = load(ROOT / ".github" / "workflows" / "offline-gate.yml")
    assert any(step.get("run") == "make lint" for step in gate["jobs"]["test"]["steps"])
