"""Benchmark: a new user's first `make plan STACK=dev` on a fresh clone, against a plain pip install.

Everything starts cold, as on a new machine: a fresh ``git clone`` of this
repository (committed files only) in a temporary folder, empty uv and pip
caches, and no uv on PATH, so ``make`` bootstraps its pinned uv from PyPI
first. This machine's pip configuration (mirrors, find-links) is set aside, so
both sides download from the package index alone.

Prints, for one run:
- ``make plan STACK=dev`` in the clone, setup included (uv bootstrap, .venv from
  the lock, the plan), and the part that is the plan itself (a second, warm run);
- ``python3 -m venv`` + ``pip install -r requirements.txt`` of the same clone,
  cold pip cache; and plan / pip (target <= 0.5);
- ``make test`` in another fresh clone with cold caches (setup included).

Usage: python3 bench/bench_setup.py [--python python3] [--no-test]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Variables that point pip or uv at this machine's mirrors or caches instead of the package index.
DROPPED = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CACHE_DIR",
           "UV_CACHE_DIR", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_INDEX", "UV_DEFAULT_INDEX",
           "VIRTUAL_ENV", "PYTHONPATH")


def base_python(name: str) -> str:
    """The real interpreter behind ``name`` on the current PATH (through shims such as pyenv's)."""
    return subprocess.run([name, "-c", "import sys; print(sys.executable)"], check=True, capture_output=True,
                          text=True).stdout.strip()


def cold_env(scratch: Path, python: str) -> dict[str, str]:
    """Empty caches, no pip configuration, and a PATH with ``python3`` but without any uv."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(python)
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "uv").exists()]
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.update(PATH=os.pathsep.join([str(bin_dir), *kept]), PIP_CONFIG_FILE=os.devnull,
               PIP_CACHE_DIR=str(scratch / "pip-cache"), UV_CACHE_DIR=str(scratch / "uv-cache"),
               XDG_CACHE_HOME=str(scratch / "xdg-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    assert shutil.which("uv", path=env["PATH"]) is None, "uv is still on PATH"
    return env


def timed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> float:
    start = time.perf_counter()
    with log.open("w") as out:
        result = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({result.returncode}) in {cwd}; its output: {log}")
    return elapsed


def fresh_clone(scratch: Path) -> Path:
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    return clone


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="python3", help="the Python a new user has as python3")
    parser.add_argument("--no-test", action="store_true", help="skip the fresh-clone make test")
    args = parser.parse_args()
    python = base_python(args.python)
    logs = Path(tempfile.mkdtemp(prefix="bench-setup-logs-"))

    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        scratch = Path(tmp)
        env = cold_env(scratch, python)
        clone = fresh_clone(scratch)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True, capture_output=True,
                              text=True).stdout.strip()
        plan = timed(["make", "plan", "STACK=dev"], clone, env, logs / "make-plan-cold.log")
        plan_warm = timed(["make", "plan", "STACK=dev"], clone, env, logs / "make-plan-warm.log")
        pip_venv = scratch / "pip-venv"
        pip = timed(["bash", "-c", f"python3 -m venv {pip_venv} && {pip_venv}/bin/pip install -q -r requirements.txt"],
                    clone, env, logs / "pip-install.log")

    test = None
    if not args.no_test:
        with tempfile.TemporaryDirectory(prefix="bench-setup-test-") as tmp:
            scratch = Path(tmp)
            env = cold_env(scratch, python)
            test = timed(["make", "test"], fresh_clone(scratch), env, logs / "make-test-cold.log")

    print(f"fresh clone of {head}, cold uv and pip caches, no uv on PATH; python {python}; cpus {os.cpu_count()}")
    print(f"make plan STACK=dev, setup included (uv bootstrap, .venv, plan): {plan:6.1f} s"
          f"   (of which the plan: {plan_warm:.1f} s, setup: {plan - plan_warm:.1f} s)")
    print(f"python3 -m venv + pip install -r requirements.txt:              {pip:6.1f} s")
    print(f"make plan / pip install:                                         {plan / pip:6.2f}   (target <= 0.5)")
    if test is not None:
        print(f"make test, fresh clone, setup included:                          {test:6.1f} s")
    print(f"logs: {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
