"""A copy of policies/ with its own requirements.txt installs and runs, far from the repository.

The copy goes to a temporary folder, gets its own virtualenv with exactly what
its lock (requirements.txt) pins, plus the component library from a wheel built
here (the library is not on a package index yet), and is served over gRPC by that virtualenv's
Python, as `pulumi preview --policy-pack` would. It then judges a real offline
plan: a good one passes, a broken one is refused.
"""

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file
from policy_gate.analyzer import PolicyPackProcess
from policy_gate.gate import run_gate

ROOT = Path(__file__).resolve().parent.parent


def _uv() -> list[str]:
    """uv, as the Makefile provides it: $UV, the one it bootstraps into .venv-tools/, or on PATH."""
    search = os.pathsep.join([str(ROOT / ".venv-tools" / "bin"), os.environ.get("PATH", "")])
    found = os.environ.get("UV") or shutil.which("uv", path=search)
    assert found, "uv is part of the toolchain (make venv installs it)"
    return [found]


@pytest.fixture(scope="module")
def pack_copy(tmp_path_factory) -> tuple[Path, str]:
    where = tmp_path_factory.mktemp("standalone")
    pack = where / "pack"
    shutil.copytree(ROOT / "policies", pack, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    wheels = where / "wheels"
    env = {**os.environ, "UV_NO_PROGRESS": "1"}
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources.
    source = where / "components"
    shutil.copytree(ROOT / "components", source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    subprocess.run([*_uv(), "build", "--wheel", "--out-dir", str(wheels), str(source)],
                   check=True, capture_output=True, env=env)
    venv = where / "venv"
    subprocess.run([*_uv(), "venv", "--python", sys.executable, str(venv)], check=True, capture_output=True, env=env)
    python = str(venv / "bin" / "python")
    # Exactly what the pack's lock pins (hash-checked), then the component library from its wheel.
    subprocess.run([*_uv(), "pip", "install", "--python", python, "--require-hashes", "-r",
                    str(pack / "requirements.txt")], check=True, capture_output=True, env=env)
    library = next(wheels.glob("gpu_fungibility_components-*.whl"))
    subprocess.run([*_uv(), "pip", "install", "--python", python, "--no-deps", str(library)],
                   check=True, capture_output=True, env=env)
    return pack, python


def test_the_copy_imports_nothing_from_the_repository(pack_copy):
    pack, python = pack_copy
    probe = ("import runpy, sys\n"
             "sys.modules.pop('pulumi_policy', None)\n"
             "import pulumi_policy\n"
             "pulumi_policy.PolicyPack = lambda **kwargs: print(len(kwargs['policies']))\n"
             "runpy.run_path('__main__.py', run_name='__main__')\n"
             "leaked = [m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)"
             f" and m.__file__.startswith({str(ROOT)!r})]\n"
             "assert not leaked, leaked\n")
    result = subprocess.run([python, "-c", probe], cwd=pack, capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) >= 10


def test_the_copy_passes_a_good_plan_and_refuses_a_broken_one(pack_copy):
    pack, python = pack_copy
    document = plan_document(run_stack_file("dev"))
    with PolicyPackProcess(pack, python=python) as served:
        good = run_gate(document, pack=served)
    assert not good.mandatory, good.mandatory

    broken = copy.deepcopy(document)
    for step in broken["steps"]:
        labels = (step["newState"].get("inputs") or {}).get("nodeConfig", {}).get("labels") or {}
        labels.pop("gke-no-default-nvidia-gpu-device-plugin", None)
    with PolicyPackProcess(pack, python=python) as served:
        refused = run_gate(broken, pack=served)
    assert refused.mandatory
