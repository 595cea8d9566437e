"""Plan a stack at a git ref (in a temporary worktree) and in the working tree, side by side.

Each side runs the offline plan with the current interpreter in a subprocess whose working directory
and ``PYTHONPATH`` are that side's tree, so each imports its own program, not the other's (nor a library
installed from the working tree). It calls the plan's runner and plan.json writer
(``offline_plan.run.run_stack_file``, ``offline_plan.planjson``, there since the first offline plan)
and nothing else: no manifests, policy pack or simulation, which a diff does not read. Plans go to a
temporary folder, never to ``build/``. The two plans run at the same time; when one fails, the other
is stopped.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_BASES = ("origin/main", "HEAD")
#: Read by offline_plan.run (its SECRET_DIGEST_ENV; a test keeps the two equal): with it, each masked
#: secret carries a digest keyed for this one diff, so both plans can tell whether a secret changed.
SECRET_DIGEST_ENV = "GPU_FUNGIBILITY_SECRET_DIGEST_KEY"
_TAIL_LINES = 15

#: The plan of one side, run as ``python -c`` so that the side's tree (the working directory) is first
#: on ``sys.path``. Exit 2 with the plan's own message for a missing stack file or an invalid config.
_PLAN_ONE_SIDE = """\
import sys
from pathlib import Path

from offline_plan import planjson
from offline_plan.run import run_stack_file

stack, out = sys.argv[1], Path(sys.argv[2])
try:
    run = run_stack_file(stack, Path.cwd())
except FileNotFoundError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
except Exception as exc:
    if type(exc).__name__ != "ConfigError":
        raise
    print(f"Pulumi.{stack}.yaml: {exc}", file=sys.stderr)
    sys.exit(2)
out.write_text(planjson.dumps(planjson.plan_document(run)))
"""


class Interrupted(SystemExit):
    """SIGTERM / SIGHUP / SIGINT arrived: raised where the plan is, so every ``finally`` cleans up.

    Exits 128 + the signal's number (143 for SIGTERM, 130 for Ctrl-C), as a shell reports a process
    the signal ended.
    """

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(128 + signum)


@contextmanager
def stops_cleanly() -> Iterator[None]:
    """Turn SIGTERM, SIGHUP and SIGINT into :class:`Interrupted` while the block runs (main thread only).

    A cancelled CI job or ``timeout`` sends SIGTERM, whose default action ends Python at once: the
    base worktree would stay registered in the repository and the temporary folders behind. Once
    one signal arrived, further ones are ignored until the cleanup is done.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

    def stop(signum: int, _frame: object) -> None:
        for each in caught:
            signal.signal(each, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {each: signal.signal(each, stop) for each in caught}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


class DiffError(Exception):
    """A diff that cannot be made; ``side`` names the plan that failed, if one did."""

    def __init__(self, message: str, side: str | None = None):
        super().__init__(message)
        self.side = side


@dataclass
class Plans:
    base: dict[str, Any]
    head: dict[str, Any]
    base_ref: str
    base_commit: str
    notes: list[str] = field(default_factory=list)


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, args, result.stdout, result.stderr)
    return result.stdout.strip()


def resolve_base(project: Path, ref: str | None) -> tuple[str, str]:
    """(the ref as given, its commit); the default is ``origin/main`` when it exists, else ``HEAD``."""
    try:
        git(project, "rev-parse", "--git-dir")
    except (subprocess.CalledProcessError, FileNotFoundError):
        raise DiffError(f"{project} is not in a git checkout: there is no BASE to plan") from None
    for candidate in ([ref] if ref else list(DEFAULT_BASES)):
        try:
            return candidate, git(project, "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
        except subprocess.CalledProcessError:
            continue
    if ref:
        raise DiffError(f"BASE {ref!r} is not a commit in this repository (a branch, tag or commit; "
                        "run `git fetch` if it lives on a remote)", side="base")
    raise DiffError("neither origin/main nor HEAD is a commit here: give BASE=<git ref>", side="base")


@contextmanager
def base_worktree(project: Path, commit: str) -> Iterator[Path]:
    """The project folder as it is at ``commit``, in a detached worktree removed afterwards (also on failure)."""
    toplevel = Path(git(project, "rev-parse", "--show-toplevel"))
    inside = project.resolve().relative_to(toplevel.resolve())
    holder = Path(tempfile.mkdtemp(prefix="plan-diff-base-"))
    tree = holder / "tree"
    try:
        try:
            git(toplevel, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        except subprocess.CalledProcessError as exc:
            raise DiffError(f"cannot check out BASE {commit[:12]}: {exc.stderr.strip()}", side="base") from None
        yield tree / inside
    finally:
        # A stop during `worktree add` leaves it locked ("initializing"): unlock, then remove (-f -f: locked too).
        subprocess.run(["git", "-C", str(toplevel), "worktree", "unlock", str(tree)], capture_output=True)
        if tree.exists():
            subprocess.run(["git", "-C", str(toplevel), "worktree", "remove", "--force", "--force", str(tree)],
                           capture_output=True)
        # A stop during `worktree add` kills git, not the checkout it started, which may still be writing files
        # into the tree for a moment: remove until the folder stays gone (bounded).
        for _ in range(100):
            shutil.rmtree(holder, ignore_errors=True)
            if not holder.exists():
                break
            time.sleep(0.05)
        # After the folder is gone, prune drops a registration that `remove` could not (a stop mid-add).
        subprocess.run(["git", "-C", str(toplevel), "worktree", "prune"], capture_output=True)


def import_path(tree: Path, shim: Path) -> list[str]:
    """The ``sys.path`` head under which a tree imports its own code and nothing of another tree's.

    The tree itself comes first. A package project in it (a ``pyproject.toml`` at the top or up to two
    levels down) can map a package to a folder of another name (``[tool.setuptools] package-dir``:
    ``components/`` installed as ``gpu_fungibility``); ``shim`` gets a link of the package's name to
    that folder of *this* tree, so the import does not fall through to a copy installed into the
    interpreter (in editable mode, from the working tree). ``packages.find.where`` and ``package-dir``
    roots (src layouts) are added as they are. Other build backends' settings are not read.
    """
    roots: list[Path] = [tree]
    links = False
    for pyproject in sorted([*tree.glob("pyproject.toml"), *tree.glob("*/pyproject.toml"),
                             *tree.glob("*/*/pyproject.toml")]):
        folder = pyproject.parent
        if {".venv", "build", "node_modules"} & set(folder.relative_to(tree).parts):
            continue
        try:
            setuptools = tomllib.loads(pyproject.read_text()).get("tool", {}).get("setuptools", {})
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            continue
        for package, directory in (setuptools.get("package-dir") or {}).items():
            target = (folder / directory).resolve()
            if not package:
                roots.append(target)
            elif "." not in package and (target / "__init__.py").is_file() and not (shim / package).exists():
                shim.mkdir(parents=True, exist_ok=True)
                (shim / package).symlink_to(target, target_is_directory=True)
                links = True
        packages = setuptools.get("packages")
        if isinstance(packages, dict):
            roots += [folder / where for where in (packages.get("find") or {}).get("where", [])]
    if links:
        roots.insert(1, shim)
    return [str(r) for r in dict.fromkeys(roots) if r.is_dir()]


@dataclass
class _Run:
    side: str
    tree: Path
    out: Path
    log: Path
    process: subprocess.Popen | None = None


def _start(run: _Run, stack: str, key: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = os.pathsep.join(import_path(run.tree, run.out.with_suffix(".path")))
    env[SECRET_DIGEST_ENV] = key
    with open(run.log, "wb") as log:
        run.process = subprocess.Popen([sys.executable, "-c", _PLAN_ONE_SIDE, stack, str(run.out)],
                                       cwd=run.tree, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait(runs: list[_Run]) -> None:
    """Wait for every plan; when one fails, stop the others and raise for the failed one."""
    pending = [r for r in runs if r.process is not None]
    while pending:
        for run in list(pending):
            code = run.process.poll()
            if code is None:
                continue
            pending.remove(run)
            if code != 0:
                for other in pending:
                    other.process.terminate()
                for other in pending:
                    try:
                        other.process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        other.process.kill()
                raise DiffError(f"the {run.side} plan failed (exit {code}):\n{_tail(run.log)}", side=run.side)
        if pending:
            time.sleep(0.05)


def _tail(log: Path) -> str:
    lines = log.read_text(errors="replace").rstrip().splitlines()
    return "\n".join("  " + line for line in lines[-_TAIL_LINES:])


def _read(run: _Run) -> dict[str, Any]:
    if not run.out.is_file():
        raise DiffError(f"the {run.side} plan wrote no plan.json:\n{_tail(run.log)}", side=run.side)
    return json.loads(run.out.read_text())


def plan_both(project: Path, stack: str, base: str | None) -> Plans:
    """Plan ``stack`` at ``base`` and in the working tree; raises DiffError saying which side failed.

    Stopped by a signal, it removes the base worktree and its temporary folders, stops both plans and
    raises :class:`Interrupted`.
    """
    with stops_cleanly():
        return _plan_both(project, stack, base)


def _plan_both(project: Path, stack: str, base: str | None) -> Plans:
    base_ref, commit = resolve_base(project, base)
    key = secrets.token_hex(32)  # digests comparable between the two plans, meaningless after
    stack_file = f"Pulumi.{stack}.yaml"
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="plan-diff-") as tmp:
        head = _Run("working-tree", project, Path(tmp) / "head.json", Path(tmp) / "head.log")
        base_run = _Run("base", project, Path(tmp) / "base.json", Path(tmp) / "base.log")
        head_has = (project / stack_file).is_file()
        try:
            if head_has:
                _start(head, stack, key)
            with base_worktree(project, commit) as base_tree:
                try:
                    base_run.tree = base_tree
                    base_has = (base_tree / stack_file).is_file()
                    if not head_has and not base_has:
                        raise DiffError(f"no stack file {stack_file} in the working tree or at BASE {base_ref}")
                    if base_has:
                        _start(base_run, stack, key)
                    _wait([head, base_run])
                    base_doc = _read(base_run) if base_has else {"steps": []}
                finally:
                    # Before the worktree goes: a base plan still running would write into the folders removed.
                    _stop(base_run)
            head_doc = _read(head) if head_has else {"steps": []}
        finally:
            for run in (head, base_run):
                _stop(run)
    if not base_has:
        notes.append(f"{stack_file} does not exist at BASE {base_ref}: every resource is new"
                     + _head_hint(project, stack, stack_file, base_ref))
    if not head_has:
        notes.append(f"{stack_file} does not exist in the working tree: every resource would be deleted")
    return Plans(base_doc, head_doc, base_ref, commit, notes)


def _stop(run: _Run) -> None:
    """Kill a plan that is still running and wait for it."""
    if run.process is not None and run.process.poll() is None:
        run.process.kill()
        run.process.wait()


def _head_hint(project: Path, stack: str, stack_file: str, base_ref: str) -> str:
    """When the stack file is committed at HEAD but not at BASE: say how to compare with the last commit."""
    if base_ref == "HEAD":
        return ""
    try:
        git(project, "cat-file", "-e", f"HEAD:./{stack_file}")
    except (subprocess.CalledProcessError, OSError):
        return ""
    return (f". {stack_file} is committed at HEAD: `make diff STACK={stack} BASE=HEAD` compares with "
            "your last commit instead")
