"""`make diff` end to end on a real git repository: a copy of this project with a base commit and a change.

One diff (two plans, run side by side) covers every op; the error cases stop before or during planning.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from plan_diff.__main__ import main as diff_main

ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=offline diff test", "-c", "user.email=diff@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
POOL = "gcp:container/nodePool:NodePool"
TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _project_files() -> list[str]:
    tracked = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    return [f for f in tracked if (ROOT / f).is_file()]


def _edit_stack(repo: Path, change) -> None:
    path = repo / "Pulumi.dev.yaml"
    doc = yaml.safe_load(path.read_text())
    change(doc["config"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _with_secret(value: str):
    def change(config: dict) -> None:
        config["gpu-fungibility:hfToken"] = {"secure": value}
    return change


def _the_change(config: dict) -> None:
    pools = config["gpu-fungibility:nodePools"]
    pools["a100-40gb"]["autoscaling"]["max"] = 3                                      # update
    config["gpu-fungibility:computeClasses"]["vllm-gpu-ccc"]["pools"].reverse()       # claim template replaced
    pools["l4"] = {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1},
                   "autoscaling": {"min": 0, "max": 1}, "zones": ["us-central1-c"]}   # create
    del pools["tpu-v6e"]                                                              # delete
    del config["gpu-fungibility:workloads"]["vllm-tpu"]
    _with_secret("v1:BBBBBBBBsecond")(config)                                         # secret changed


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """HEAD~1: the project before it had an offline plan; HEAD: the project with a stack secret;
    uncommitted: the change under test."""
    repo = tmp_path_factory.mktemp("project")
    files = _project_files()
    for name in files:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all", "--", ".", ":!offline_plan")
    _git(repo, "commit", "--quiet", "-m", "before the offline plan")
    _edit_stack(repo, _with_secret("v1:AAAAAAAAfirst"))
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "the base")
    _edit_stack(repo, _the_change)
    secret_module = next(p for p in repo.rglob("*.py") if 'HF_SECRET_NAME = "hf-token"' in p.read_text())
    secret_module.write_text(secret_module.read_text().replace('HF_SECRET_NAME = "hf-token"',
                                                               'HF_SECRET_NAME = "hf-token-v2"'))
    return repo


@pytest.fixture(scope="module")
def diffed(repo, tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("out")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = diff_main(["--stack", "dev", "--json", "--project", str(repo), "--out", str(out)])
    assert code == 0
    return json.loads(printed.getvalue()), out / "dev"


def _steps(doc: dict, op: str, type_: str | None = None) -> list[dict]:
    return [s for s in doc["steps"] if s["op"] == op and (type_ is None or s["type"] == type_)]


def _step(doc: dict, name: str) -> dict:
    [step] = [s for s in doc["steps"] if s["urn"].endswith("::" + name)]
    return step


def test_pool_max_changed_is_an_update(diffed):
    doc, _ = diffed
    step = _step(doc, "a100-40gb-nodepool")
    assert step["op"] == "update"
    assert step["detailedDiff"] == {"autoscaling.totalMaxNodeCount": {"kind": "update", "inputDiff": True}}
    assert step["component"].endswith("GkeGpuNodePool::a100-40gb"), "listed under its component"


def test_compute_class_order_changed_replaces_the_claim_template_and_updates_the_compute_class(diffed):
    doc, _ = diffed
    template = _step(doc, "dra-claims-template-vllm-gpu")
    assert template["op"] == "replace" and template["replaceReasons"] == ["spec"]
    assert all(d["kind"] == "update-replace" for d in template["detailedDiff"].values())
    compute_class = _step(doc, "vllm-gpu-ccc-computeclass")
    assert compute_class["op"] == "update"
    assert set(compute_class["detailedDiff"]) == {"spec.priorities[0].nodepools[0]", "spec.priorities[1].nodepools[0]"}


def test_pool_added_and_removed_are_create_and_delete(diffed):
    doc, _ = diffed
    assert [s["urn"].rsplit("::", 1)[1] for s in _steps(doc, "create", POOL)] == ["l4-nodepool"]
    assert [s["urn"].rsplit("::", 1)[1] for s in _steps(doc, "delete", POOL)] == ["tpu-v6e-nodepool"]
    assert _step(doc, "vllm-tpu-deployment")["op"] == "delete"
    assert doc["changeSummary"]["same"] > 0


def test_a_changed_secret_shows_only_as_secret_and_the_working_tree_code_is_the_one_planned(diffed):
    doc, out = diffed
    secret = _step(doc, "ns-inference-hf-token")
    assert secret["op"] == "replace"
    changes = {c["path"]: c for c in secret["propertyChanges"]}
    assert changes["stringData.hf_api_token"]["old"] == changes["stringData.hf_api_token"]["new"] == "[secret]"
    assert (changes["metadata.name"]["old"], changes["metadata.name"]["new"]) == ("hf-token", "hf-token-v2"), \
        "the base plans its own code, the working tree its own"
    written = (out / "diff.json").read_text() + (out / "diff.md").read_text()
    assert "[secret:" not in written and "AAAA" not in written and "BBBB" not in written


def test_diff_md_warns_first_about_what_running_replicas_feel(diffed):
    _, out = diffed
    text = (out / "diff.md").read_text()
    warning = text[text.index("> [!WARNING]"):text.index("###")]
    assert "ResourceClaimTemplate `vllm-gpu-claim` is replaced" in warning
    assert "TPU node pool `tpu-v6e` is deleted" in warning
    assert json.loads((out / "diff.json").read_text())["steps"], "diff.json is written beside it"


def test_the_base_worktree_is_gone_afterwards(repo, diffed):
    assert len(_git(repo, "worktree", "list", "--porcelain").split("worktree ")) == 2, "only the main tree"


def test_a_base_that_does_not_plan_is_exit_2_naming_the_base_side(repo, tmp_path, capsys):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "diff.md").write_text("an earlier diff\n")
    code = diff_main(["--stack", "dev", "--base", "HEAD~1", "--project", str(repo), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "the base plan failed" in err
    assert "No module named 'offline_plan'" in err, "the base imports its own tree, not the working tree's"
    assert not (tmp_path / "dev" / "diff.md").exists(), "no earlier diff passes for this one"
    assert len(_git(repo, "worktree", "list", "--porcelain").split("worktree ")) == 2


def test_an_unknown_base_is_exit_2(repo, tmp_path, capsys):
    code = diff_main(["--stack", "dev", "--base", "no-such-branch", "--project", str(repo), "--out", str(tmp_path)])
    assert code == 2
    assert "BASE 'no-such-branch' is not a commit" in capsys.readouterr().err


def test_outside_a_git_checkout_is_exit_2(tmp_path, capsys):
    shutil.copy2(ROOT / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev.yaml")
    assert diff_main(["--stack", "dev", "--project", str(tmp_path), "--out", str(tmp_path / "build")]) == 2
    assert "not in a git checkout" in capsys.readouterr().err
