"""`make diff` stopped by a signal (a cancelled CI job, `timeout`) leaves no worktree, folder or process behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hang_guard import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=offline diff test", "-c", "user.email=diff@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path_factory) -> Path:
    """A fresh copy of the project per test: a worktree one test leaves behind cannot hide another's."""
    repo = tmp_path_factory.mktemp("project")
    tracked = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in (f for f in tracked if (ROOT / f).is_file()):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    return repo


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_plan_removes_the_worktree_and_temporary_folders(repo, tmp_path, signum):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    diff = subprocess.Popen([sys.executable, "-m", "plan_diff", "--stack", "dev", "--base", "HEAD",
                             "--project", str(repo), "--out", str(tmp_path / "out")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    plans: list[int] = []
    while time.monotonic() < deadline:  # both plans running, the base worktree registered
        plans = _children_of(diff.pid)
        if len(_git(repo, "worktree", "list").splitlines()) == 2 and len(plans) >= 2:
            break
        assert diff.poll() is None, diff.communicate()
        time.sleep(0.05)
    else:
        pytest.fail("the diff never started its two plans")
    assert sorted(p.name.split("-")[0] for p in tmp.iterdir()) == ["plan", "plan"]
    diff.send_signal(signum)
    _, err = diff.communicate(timeout=HANG_GUARD_SECONDS)
    assert diff.returncode == 128 + signum, err
    assert "stopped by signal" in err and "Traceback" not in err
    assert len(_git(repo, "worktree", "list").splitlines()) == 1, "the base worktree is still registered"
    assert list(tmp.iterdir()) == [], "temporary folders left behind"
    time.sleep(0.2)
    assert not [p for p in plans if Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text()
                .rsplit(")", 1)[1].split()[0]], "a plan process still runs"
