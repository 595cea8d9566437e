"""MIG layouts against each GPU's real slice geometry: library, stack config, policy pack and simulator."""

from __future__ import annotations

import copy

import pytest
from gpu_fungibility import catalog, devices, mig_geometry
from gpu_fungibility.device_selectors import MIG_DEVICE_CLASS, MIG_PARENT_ATTRIBUTE, mig_slice_selector

from policies.rules.claims import claim_problems
from policies.stack_view import Res
from simulator.engine import SimulationError, simulate
from stacks.loader import ConfigError, parse_stack_config
from tests.test_config import GKE

A100_80 = "nvidia-a100-80gb"

# (GPU, layout, fits) - NVIDIA MIG user guide, "Supported MIG Profiles" (counts and placements)
LAYOUTS = [
    (A100_80, ["7g.80gb"], True),
    (A100_80, ["7g.80gb"] * 8, False),
    (A100_80, ["7g.80gb", "1g.10gb"], False),
    (A100_80, ["1g.10gb"] * 7, True),
    (A100_80, ["1g.10gb"] * 8, False),
    (A100_80, ["1g.20gb"] * 4, True),
    (A100_80, ["1g.20gb"] * 5, False),
    (A100_80, ["2g.20gb"] * 3, True),
    (A100_80, ["2g.20gb"] * 3 + ["1g.10gb"], True),
    (A100_80, ["3g.40gb"] * 2, True),
    (A100_80, ["3g.40gb"] * 2 + ["1g.10gb"], False),   # 9 memory slices
    (A100_80, ["4g.40gb", "3g.40gb"], True),
    (A100_80, ["4g.40gb"] * 2, False),
    (A100_80, ["4g.40gb", "2g.20gb", "1g.10gb"], True),
    (A100_80, ["4g.40gb", "2g.20gb", "2g.20gb"], False),  # 8 compute slices
    ("nvidia-tesla-a100", ["1g.5gb"] * 7, True),
    ("nvidia-tesla-a100", ["7g.40gb", "7g.40gb"], False),
    ("nvidia-h100-80gb", ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], True),
    ("nvidia-h200-141gb", ["1g.35gb"] * 4, True),
    ("nvidia-h200-141gb", ["7g.141gb", "1g.18gb"], False),
]


@pytest.mark.parametrize(("gpu", "layout", "fits"), LAYOUTS, ids=[f"{g}-{'+'.join(lay)}"[:60] for g, lay, _ in LAYOUTS])
def test_layouts_fit_as_the_guide_says(gpu, layout, fits):
    assert (mig_geometry.layout_problem(gpu, layout) is None) == fits


def test_the_catalog_and_the_geometry_name_the_same_profiles():
    for gpu in catalog.GPUS.values():
        assert tuple(mig_geometry.profiles_of(gpu.type)) == tuple(gpu.mig_profiles), gpu.type


@pytest.mark.parametrize(("layout", "copies"), [
    (["1g.10gb"], 7), (["1g.20gb"], 4), (["2g.20gb"], 3), (["3g.40gb"], 2), (["4g.40gb"], 1), (["7g.80gb"], 1),
    (["3g.40gb", "1g.10gb"], 1), (["7g.80gb"] * 8, 0)])
def test_copies_per_gpu_never_round_an_over_full_set_up(layout, copies):
    assert devices.mig_sets_per_gpu(layout, A100_80) == copies
    assert len(devices.published("c", "n", A100_80, 1, layout)[1]) == copies * len(layout)


def _mig_config(slices: list[str], second: list[str] | None = None) -> dict:
    raw = copy.deepcopy(GKE)
    raw["workloads"]["mig"] = {"pool": "a100-80gb", "mig": [
        {"name": f"s{i}", "profile": p, "model": "m", "port": 8000 + i} for i, p in enumerate(slices)]}
    if second:
        raw["workloads"]["mig2"] = {"pool": "a100-80gb", "mig": [
            {"name": f"t{i}", "profile": p, "model": "m", "port": 9000 + i} for i, p in enumerate(second)]}
    return raw


def test_the_config_refuses_eight_7g_slices_on_one_a100():
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(_mig_config(["7g.80gb"] * 8))
    assert any(path == "workloads.mig.mig" and "one GPU holds at most 1 x 7g.80gb" in message
               for path, message in caught.value.issues), caught.value.issues


def test_the_config_refuses_workloads_that_together_overfill_the_gpu():
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(_mig_config(["4g.40gb"], ["4g.40gb"]))
    assert any("share each GPU" in message for _, message in caught.value.issues), caught.value.issues


def test_a_layout_that_fits_is_accepted():
    cfg = parse_stack_config(_mig_config(["3g.40gb", "3g.40gb"]))
    assert cfg.workloads["mig"].mig is not None


def _claim(profiles: list[str]) -> Res:
    requests = [{"name": f"s{i}", "exactly": {"deviceClassName": MIG_DEVICE_CLASS, "count": 1, "selectors": [
        {"cel": {"expression": mig_slice_selector(A100_80, p)}}]}} for i, p in enumerate(profiles)]
    devices_ = {"requests": requests, "constraints": [
        {"requests": [r["name"] for r in requests], "matchAttribute": MIG_PARENT_ATTRIBUTE}]}
    props = {"kind": "ResourceClaimTemplate", "metadata": {"name": "mig-claim"}, "spec": {"spec": {"devices": devices_}}}
    return Res("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "urn:x", "mig-claim", props)


def test_the_pack_refuses_eight_7g_slices_from_one_gpu():
    problems = claim_problems(_claim(["7g.80gb"] * 8))
    assert any("must come from one GPU" in p and "at most 1 x 7g.80gb" in p for p in problems), problems
    assert claim_problems(_claim(["4g.40gb", "3g.40gb"])) == []


def test_the_simulator_refuses_an_over_full_gpu_instead_of_scheduling_it():
    cfg = parse_stack_config(_mig_config(["7g.80gb"] * 8), checks=False)
    with pytest.raises(SimulationError, match="one GPU holds at most 1 x 7g.80gb"):
        simulate(cfg, [])
