"""A memory floor on MIG slices is judged on the memory NVML gives a slice, not on the profile name."""

from __future__ import annotations

import copy

import pytest
from gpu_fungibility import catalog, devices, dra_cel
from gpu_fungibility.claims import claims_issues
from gpu_fungibility.device_selectors import device_class_expression

from offline_plan.summary import _fungibility
from stacks.loader import ConfigError, parse_stack_config
from stacks.rules import config_warnings
from tests.test_config import GKE

H100 = "NVIDIA H100 80GB HBM3"


def _h100_config(**device_class) -> dict:
    raw = copy.deepcopy(GKE)
    raw["nodePools"]["h100"] = {"machineType": "a3-highgpu-1g", "accelerator": {"type": "nvidia-h100-80gb",
                                                                                "count": 1},
                                "autoscaling": {"min": 1, "max": 1}}
    raw["deviceClasses"] = {"mig-10g": {"devices": "mig", **device_class}}
    return raw


def _with_mig_workload(raw: dict, *profiles: str, pool: str = "h100", **extra) -> dict:
    raw["workloads"]["mig"] = {"pool": pool, **extra, "mig": [
        {"name": f"s{i}", "profile": p, "model": "m", "port": 8000 + i} for i, p in enumerate(profiles)]}
    return raw


def test_a_mig_class_with_min_memory_10_on_h100_warns_that_no_1g_10gb_slice_has_it():
    cfg = parse_stack_config(_h100_config(minMemoryGi=10, productNames=[H100]))
    warnings = [w for w in config_warnings(cfg) if w.startswith("deviceClasses.mig-10g")]
    assert len(warnings) == 1
    assert "1g.10gb of nvidia-h100-80gb (9984 MiB)" in warnings[0] and "never selects" in warnings[0]


def test_a_mig_class_no_slice_of_the_stack_reaches_is_refused():
    raw = _with_mig_workload(_h100_config(minMemoryGi=10, productNames=[H100]), "1g.10gb")
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    assert any(path == "deviceClasses.mig-10g.minMemoryGi" and "1g.10gb of nvidia-h100-80gb (9984 MiB)" in message
               for path, message in caught.value.issues), caught.value.issues
    # a 1g.20gb slice (20096 MiB) reaches it
    parse_stack_config(_with_mig_workload(_h100_config(minMemoryGi=10, productNames=[H100]), "1g.20gb"))


def test_a_mig_class_asking_more_than_any_slice_is_refused_by_the_library():
    issues = claims_issues({"device_classes": {"huge": {"devices": "mig", "min_memory_gi": 80,
                                                        "product_names": [H100]}}})
    assert [(p, m) for p, m in issues if p == "device_classes.huge.min_memory_gi" and "81152 MiB" in m], issues
    assert claims_issues({"device_classes": {"ok": {"devices": "mig", "min_memory_gi": 79,
                                                    "product_names": [H100]}}}) == []
    assert claims_issues({"device_classes": {"tpu": {"driver": "tpu.google.com", "devices": "mig"}}})


def test_the_mig_class_selector_keeps_the_slices_with_enough_real_memory():
    expression = device_class_expression("gpu.nvidia.com", min_memory_gi=10, devices="mig")
    program = dra_cel.compile_expression(expression)
    driver, entries = devices.published("c", "n", "nvidia-h100-80gb", 1, ["1g.10gb", "1g.20gb", "2g.20gb"])
    picked = {e["attributes"]["profile"]["string"] for e in entries
              if dra_cel.matches(program, dra_cel.Device.from_slice_device(driver, e))}
    assert picked == {"1g.20gb", "2g.20gb"}
    whole = dra_cel.compile_expression(device_class_expression("gpu.nvidia.com", min_memory_gi=10))
    assert not any(dra_cel.matches(whole, dra_cel.Device.from_slice_device(driver, e)) for e in entries)


def test_a_mig_workloads_memory_floor_counts_its_real_slices():
    raw = _with_mig_workload(copy.deepcopy(GKE), "1g.10gb", pool="a100-80gb", minAcceleratorMemoryGi=10)
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    assert any(path == "workloads.mig.minAcceleratorMemoryGi" and "9728 MiB" in message
               for path, message in caught.value.issues), caught.value.issues
    parse_stack_config(_with_mig_workload(copy.deepcopy(GKE), "1g.10gb", "1g.10gb", pool="a100-80gb",
                                          minAcceleratorMemoryGi=19))


def test_the_fungibility_table_shows_a_slices_real_memory():
    cfg = parse_stack_config(_with_mig_workload(copy.deepcopy(GKE), "3g.40gb", "1g.10gb", pool="a100-80gb"))
    template = {"kind": "ResourceClaimTemplate", "metadata": {"name": "mig-claim"}, "spec": {"spec": {"devices": {
        "requests": [{"name": "s0", "exactly": {"deviceClassName": "mig.nvidia.com"}},
                     {"name": "s1", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}}}
    table = _fungibility(cfg, [template])
    assert "39.25 GiB (3g.40gb: 40192 MiB)" in table and "9.50 GiB (1g.10gb: 9728 MiB)" in table
    assert catalog.GPUS["nvidia-a100-80gb"].memory_gib == 80  # the whole-GPU rows keep the catalog's figure
