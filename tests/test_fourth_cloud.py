"""A fourth cloud lands from its own folder: ZKC (tests/zkc/) plans end to end and no shared file knows it.

ZKC brings a profile (one registry call), its machines, a cluster component and a pool component on the same
base as every cloud's pools, its stack arguments and composition, its offline-plan mocks and its share of the
policy pack, each named in its profile's ``parts``. ``GPU_FUNGIBILITY_CLOUDS`` makes every process of the
project (the program, the pack's server, the simulator) import it. The stack below is planned by ``make plan``'s
own command: config checks, the program under mocks, the policy pack through its gRPC server, the simulator.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.hang_guard import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parent.parent
ZKC = Path(__file__).resolve().parent / "zkc"
STACK = "zkc-dev"


def plan(tmp_path: Path, edit=None) -> subprocess.CompletedProcess:
    stack_file = tmp_path / f"Pulumi.{STACK}.yaml"
    shutil.copy(ZKC / f"Pulumi.{STACK}.yaml", stack_file)
    if edit:
        document = yaml.safe_load(stack_file.read_text())
        edit(document["config"])
        stack_file.write_text(yaml.safe_dump(document))
    env = {**os.environ, "GPU_FUNGIBILITY_CLOUDS": "tests.zkc",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "offline_plan", "--stack", STACK, "--stack-dir", str(tmp_path),
                           "--out", str(tmp_path / "build")], cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=HANG_GUARD_SECONDS)


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    where = tmp_path_factory.mktemp("zkc")
    return plan(where), where / "build" / STACK


def test_the_fourth_cloud_plans_with_its_own_components(planned):
    done, out = planned
    assert done.returncode == 0, done.stdout + done.stderr
    resources = [step["newState"] for step in json.loads((out / "plan.json").read_text())["steps"]]
    types = [r["type"] for r in resources]
    assert types.count("gpu-fungibility:index:ZkcGpuNodePool") == 2
    assert types.count("zkc:index/nodePool:NodePool") == 2
    assert "gpu-fungibility:index:NvidiaDraDriver" in types
    pools = {r["inputs"]["name"]: r["inputs"] for r in resources if r["type"] == "zkc:index/nodePool:NodePool"}
    # The base wired both pools for DRA from ZKC's profile; the fallback order became ZKC's priorities.
    assert pools["h100"]["labels"] == {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.dra": "true"}
    assert int(pools["h100"]["resourceLabels"]["zkc.example/priority"]) > int(
        pools["l4"]["resourceLabels"]["zkc.example/priority"])


def test_the_pack_judges_it_with_its_own_policy(planned):
    done, out = planned
    summary = (out / "summary.md").read_text()
    assert "0 mandatory" in summary and ": passed" in summary, summary
    assert "| `zkc-pool-priority` | advisory | pass |" in summary
    assert "| `claim-follows-compute-class` | mandatory | pass |" in summary
    assert "deletion protection: **warning**: ZKC has none" in summary  # its own "before you deploy" item


def test_the_simulator_places_it_on_its_first_pool(planned):
    done, out = planned
    summary = (out / "summary.md").read_text()
    assert "| vllm | 1 | scheduled | h100 |" in summary, summary
    assert "1/1 replicas scheduled." in summary


def test_its_config_mistakes_are_reported_at_its_keys(tmp_path):
    def wrong_machine(config):
        config["gpu-fungibility:nodePools"]["l4"]["machineType"] = "z1-gpu-8"

    done = plan(tmp_path, wrong_machine)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nodePools.l4.accelerator" in done.stderr and "z1-gpu-8 carries 8 x nvidia-h100-80gb" in done.stderr


def test_no_file_outside_its_folder_names_it():
    """The seam holds: no code or config of the project but ZKC's folder and its tests mentions ZKC (the docs
    point at it as the example)."""
    tests = ROOT / "tests"
    naming = []
    for path in ROOT.rglob("*"):
        if not path.is_file() or path.suffix not in (".py", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".json") \
                and path.name != "Makefile":
            continue
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("build", ".venv", ".git", ".engine-cache", ".rehearse-cache", "docs") \
                or relative.parts[0].startswith(".") or path.is_relative_to(tests) or "egg-info" in str(relative):
            continue
        if "zkc" in path.read_text(errors="ignore").lower():
            naming.append(str(relative))
    assert not naming


def test_a_cloud_module_that_cannot_be_imported_is_named(tmp_path):
    env = {**os.environ, "GPU_FUNGIBILITY_CLOUDS": "no_such_cloud_module"}
    done = subprocess.run([sys.executable, "-c", "import gpu_fungibility.clouds"], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=HANG_GUARD_SECONDS)
    assert done.returncode != 0
    assert "GPU_FUNGIBILITY_CLOUDS names 'no_such_cloud_module', which is not importable here" in done.stderr
