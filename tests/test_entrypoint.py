"""The start-up command, run for real: the container's command and args exactly as planned.

A fake ``nvidia-smi`` lists N GPUs, a fake ``python3`` prints its arguments;
the tensor-parallel size vLLM is started with must equal N. TPU chips are
device files under a relocated ``/dev`` (``DEVICE_ROOT``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_fungibility import entrypoint

from offline_plan.run import read_stack_file
from tests.hang_guard import HANG_GUARD_SECONDS
from tests.in_cluster_harness import run_in_cluster
from tests.test_claims import SEED_002_SLICES, mig_config

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")


@pytest.fixture(scope="module")
def dev_containers() -> dict[str, dict]:
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    return {name: run.object("Deployment", name)["spec"]["template"]["spec"]["containers"][0]
            for name in ("vllm-gpu", "vllm-tpu")}


def fake_tools(tmp_path: Path, nvidia_smi_output: str | None, nvidia_smi_exit: int = 0) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python3").write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    if nvidia_smi_output is not None:
        (bin_dir / "nvidia-smi").write_text(
            f"#!/bin/sh\ncat <<'EOF'\n{nvidia_smi_output}EOF\nexit {nvidia_smi_exit}\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


def gpu_listing(n: int, mig_per_gpu: int = 0) -> str:
    lines = []
    for i in range(n):
        lines.append(f"GPU {i}: NVIDIA A100-SXM4-40GB (UUID: GPU-0000{i}-aaaa)")
        lines += [f"  MIG 1g.10gb     Device  {j}: (UUID: MIG-{i}{j})" for j in range(mig_per_gpu)]
    return "".join(f"{line}\n" for line in lines)


def run_container(container: dict, bin_dir: Path, device_root: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    if device_root is not None:
        env["DEVICE_ROOT"] = str(device_root)
    return subprocess.run([*container["command"], *container["args"]], env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_SECONDS)


def tensor_parallel_size(stdout: str) -> int:
    values = [line.split("=", 1)[1] for line in stdout.splitlines() if line.startswith("--tensor-parallel-size=")]
    assert len(values) == 1, stdout
    return int(values[0])


def test_the_container_command_is_the_embedded_script(dev_containers):
    container = dev_containers["vllm-gpu"]
    assert container["command"] == ["/bin/sh", "-c", entrypoint.script()]
    assert container["args"][:2] == ["vllm-entrypoint", "gpu"]


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_gpu_tensor_parallel_size_equals_the_gpus_listed(dev_containers, tmp_path, gpus):
    container = dev_containers["vllm-gpu"]
    result = run_container(container, fake_tools(tmp_path, gpu_listing(gpus)))
    assert result.returncode == 0, result.stderr
    argv = result.stdout.splitlines()
    assert argv[:2] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert tensor_parallel_size(result.stdout) == gpus
    assert argv[3:] == container["args"][2:], "the planned server arguments reach vLLM unchanged"
    assert "--max-model-len=65536" in argv and "--model=google/gemma-4-31B-it" in argv


def test_mig_slices_listed_under_a_gpu_count_as_one_device(tmp_path):
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    for container in run.object("Deployment", "mig-inference")["spec"]["template"]["spec"]["containers"]:
        result = run_container(container, fake_tools(tmp_path / container["name"], gpu_listing(1, mig_per_gpu=1)))
        assert result.returncode == 0, result.stderr
        assert tensor_parallel_size(result.stdout) == 1


@pytest.mark.parametrize(("chips", "layout"), [(1, "vfio"), (4, "vfio"), (8, "vfio"), (1, "accel"), (4, "accel")])
def test_tpu_tensor_parallel_size_equals_the_chips_injected(dev_containers, tmp_path, chips, layout):
    root = tmp_path / "root"
    if layout == "vfio":  # v5e/v5p/v6e: numbered IOMMU groups plus the vfio control device
        (root / "dev" / "vfio").mkdir(parents=True)
        (root / "dev" / "vfio" / "vfio").touch()
        for i in range(chips):
            (root / "dev" / "vfio" / str(12 + i)).touch()
    else:
        (root / "dev").mkdir(parents=True)
        for i in range(chips):
            (root / "dev" / f"accel{i}").touch()
    container = dev_containers["vllm-tpu"]
    assert container["args"][:2] == ["vllm-entrypoint", "tpu"]
    result = run_container(container, fake_tools(tmp_path, None), device_root=root)
    assert result.returncode == 0, result.stderr
    assert tensor_parallel_size(result.stdout) == chips
    assert "--model=google/gemma-3-1b-it" in result.stdout.splitlines()


def test_no_gpu_fails_fast_without_starting_vllm(dev_containers, tmp_path):
    result = run_container(dev_containers["vllm-gpu"], fake_tools(tmp_path, ""))
    assert result.returncode != 0 and result.stdout == ""
    assert "no gpu device" in result.stderr


def test_nvidia_smi_failure_fails_fast(dev_containers, tmp_path):
    result = run_container(dev_containers["vllm-gpu"], fake_tools(tmp_path, "", nvidia_smi_exit=9))
    assert result.returncode != 0 and result.stdout == ""
    assert "nvidia-smi -L failed" in result.stderr


def test_no_tpu_chip_fails_fast(dev_containers, tmp_path):
    empty = tmp_path / "empty"
    (empty / "dev" / "vfio").mkdir(parents=True)
    (empty / "dev" / "vfio" / "vfio").touch()  # the control device alone is not a chip
    result = run_container(dev_containers["vllm-tpu"], fake_tools(tmp_path, None), device_root=empty)
    assert result.returncode != 0 and result.stdout == ""


def test_arguments_with_spaces_and_shell_characters_pass_through_verbatim(tmp_path):
    command, args = entrypoint.container_command("gpu", ["--model=org/m", "--chat-template={{ x }} $HOME; rm -rf /"])
    result = run_container({"command": command, "args": args}, fake_tools(tmp_path, gpu_listing(2)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "--chat-template={{ x }} $HOME; rm -rf /"


def test_conflicting_flags_are_found():
    assert entrypoint.conflicting_flags(["--port", "--portable", "-tp=2", "--model=x", "--enforce-eager"]) == [
        "--port", "-tp=2", "--model=x"]


def test_unknown_family_is_refused():
    with pytest.raises(ValueError):
        entrypoint.container_command("npu", [])


def test_script_is_posix_sh():
    checker = shutil.which("dash") or shutil.which("sh")
    assert checker
    result = subprocess.run([checker, "-n", str(entrypoint.SCRIPT_PATH)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert os.access(entrypoint.SCRIPT_PATH, os.R_OK)
