"""A memory floor on whole GPUs meets NVML's total, not the name: an H100 80GB has 79.6 GiB.

The driver publishes ``memory`` as NVML's total (../reality/nvml), so ``memory >= 80Gi`` never selects an
H100 80GB on a real cluster. The stack warns where a floor sits between what a GPU is sold with and what
NVML gives it: a DeviceClass's ``minMemoryGi`` (a selector that leaves the GPU out) and a workload's
``minAcceleratorMemoryGi`` (a model sized for more than the device has).
"""

from __future__ import annotations

import copy

import pytest
from gpu_fungibility import devices, dra_cel
from gpu_fungibility.device_selectors import device_class_expression

from offline_plan.run import read_stack_file
from stacks.loader import parse_stack_config
from stacks.rules import config_warnings
from tests.test_config import GKE


def _config(accelerator: str, machine: str, count: int = 1, **extra) -> dict:
    raw = copy.deepcopy(GKE)
    raw["nodePools"]["big"] = {"machineType": machine, "accelerator": {"type": accelerator, "count": count},
                               "autoscaling": {"min": 1, "max": 1}}
    raw.update(extra)
    return raw


def _selects(accelerator: str, min_memory_gi: int) -> bool:
    program = dra_cel.compile_expression(device_class_expression("gpu.nvidia.com", min_memory_gi=min_memory_gi))
    driver, entries = devices.published("c", "n", accelerator, 1, [])
    return any(dra_cel.matches(program, dra_cel.Device.from_slice_device(driver, e)) for e in entries)


def test_a_floor_of_80_gi_leaves_an_h100_80gb_out_and_keeps_an_a100_80gb():
    assert not _selects("nvidia-h100-80gb", 80) and _selects("nvidia-h100-80gb", 79)
    assert _selects("nvidia-a100-80gb", 80)


def test_a_class_whose_floor_the_name_meets_and_nvml_does_not_is_warned_about():
    cfg = parse_stack_config(_config("nvidia-h100-80gb", "a3-highgpu-1g",
                                     deviceClasses={"big-gpu": {"minMemoryGi": 80}}))
    warnings = [w for w in config_warnings(cfg) if w.startswith("deviceClasses.big-gpu")]
    assert len(warnings) == 1
    assert "NVIDIA H100 80GB HBM3 (81559 MiB) has less than 80 GiB as NVML reports it" in warnings[0]


@pytest.mark.parametrize(("accelerator", "machine", "floor"), [
    ("nvidia-a100-80gb", "a2-ultragpu-1g", 80), ("nvidia-h100-80gb", "a3-highgpu-1g", 79)])
def test_a_class_floor_every_gpu_of_the_stack_reaches_is_not_warned_about(accelerator, machine, floor):
    cfg = parse_stack_config(_config(accelerator, machine, deviceClasses={"big-gpu": {"minMemoryGi": floor}}))
    assert not [w for w in config_warnings(cfg) if w.startswith("deviceClasses.big-gpu")]


def test_a_workload_asking_what_the_name_promises_is_warned_about_the_real_memory():
    raw = _config("nvidia-h100-80gb", "a3-highgpu-1g")
    raw["workloads"] = {"big": {"pool": "big", "model": "google/gemma-4-31B-it", "minAcceleratorMemoryGi": 80}}
    warnings = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("workloads.big")]
    assert len(warnings) == 1 and "1 x NVIDIA H100 80GB HBM3) has 79.65 GiB as NVML reports it" in warnings[0]


def test_the_catalog_lists_the_gpus_sold_above_their_nvml_total():
    assert [g.type for g in devices.gpus_named_above_their_memory(80)] == ["nvidia-h100-80gb"]
    assert {g.type for g in devices.gpus_named_above_their_memory(24)} == {"nvidia-l4", "nvidia-a10g", "nvidia-a10"}


@pytest.mark.parametrize("stack", ["dev", "eks-dev", "prod", "aks-dev"])
def test_no_shipped_stack_has_such_a_floor(stack):
    cfg = parse_stack_config(read_stack_file(stack).namespace_config)
    assert not [w for w in config_warnings(cfg) if "as NVML reports it" in w]
