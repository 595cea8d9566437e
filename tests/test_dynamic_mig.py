"""MIG as partitionable devices (the NVIDIA driver's DynamicMIG gate) against real NVML and NVML's geometry.

H100 80GB HBM3 and H200: the counter set and every device's consumption are derived from the NVML records
(tests/fixtures/nvml) by the driver's own rules (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1,
cmd/gpu-kubelet-plugin/nvlib.go:1202-1275, partitions.go:62-99, 209-214), and the counters partition a GPU
exactly as NVML's placements do.
"""

import json
from functools import cache
from itertools import combinations_with_replacement
from pathlib import Path

import pytest
from gpu_fungibility import devices, dynamic_mig, mig_geometry
from gpu_fungibility.dra_cel.quantity import Quantity

FIXTURES = Path(__file__).parent / "fixtures" / "nvml"
REAL = [("h100-80gb-hbm3.json", "nvidia-h100-80gb"), ("h200.json", "nvidia-h200-141gb")]
MIB = 1024 * 1024
NVML_CAPACITY = {"multiprocessors": "multiprocessorCount", "copy-engines": "copyEngineCount",
                 "decoders": "decoderCount", "encoders": "encoderCount", "jpeg-engines": "jpegCount",
                 "ofa-engines": "ofaCount"}


@cache
def _slices(gpu: str, count: int = 1) -> list[dict]:
    """Built once per GPU type and count; read only."""
    return devices.node_resource_slices("node-a", gpu, count, dynamic_mig=True)


def _values(counters: dict) -> dict[str, int]:
    return {name: int(Quantity.parse(c["value"]).value) for name, c in counters.items()}


@cache
def _mig_devices(gpu: str) -> dict[str, list[dict]]:
    by_profile: dict[str, list[dict]] = {}
    for device in _slices(gpu)[1]["spec"]["devices"]:
        if device["attributes"]["type"]["string"] == "mig":
            by_profile.setdefault(device["attributes"]["profile"]["string"], []).append(device)
    return by_profile


def _first_fit(gpu: str, profiles: list[str]) -> list[dict] | None:
    """A scheduler's search over the published devices: one device per profile, within the GPU's counters."""
    counter_set = _slices(gpu)[0]["spec"]["sharedCounters"][0]
    by_profile = _mig_devices(gpu)

    def search(i: int, taken: list[dict]) -> list[dict] | None:
        if i == len(profiles):
            return taken
        for device in by_profile[profiles[i]]:
            if device not in taken and dynamic_mig.fits(counter_set, [*taken, device]):
                found = search(i + 1, [*taken, device])
                if found is not None:
                    return found
        return None

    return search(0, [])


@pytest.mark.parametrize(("fixture", "gpu"), REAL)
def test_the_counter_set_is_what_the_driver_derives_from_nvml(fixture, gpu):
    nvml = json.loads((FIXTURES / fixture).read_text())["migProfiles"]
    expected = {name: max(p[field] for p in nvml) for name, field in NVML_CAPACITY.items()}
    expected["memory"] = max(p["memorySizeMB"] for p in nvml) * MIB
    expected.update({f"memory-slice-{i}": 1 for i in range(max(size for p in nvml for _, size in p["placements"]))})
    (counter_set,) = _slices(gpu)[0]["spec"]["sharedCounters"]
    assert counter_set["name"] == "gpu-0-counter-set"
    assert _values(counter_set["counters"]) == expected


@pytest.mark.parametrize(("fixture", "gpu"), REAL)
def test_every_profile_at_every_nvml_placement_is_a_device_consuming_what_nvml_reports(fixture, gpu):
    nvml = json.loads((FIXTURES / fixture).read_text())["migProfiles"]
    published = {(d["name"].rsplit("-", 2)[1], d["name"].rsplit("-", 1)[1]): d
                 for ds in _mig_devices(gpu).values() for d in ds}
    assert set(published) == {(str(p["id"]), str(start)) for p in nvml for start, _ in p["placements"]}
    for p in nvml:
        for start, size in p["placements"]:
            device = published[(str(p["id"]), str(start))]
            expected = {name: p[field] for name, field in NVML_CAPACITY.items()}
            expected["memory"] = p["memorySizeMB"] * MIB
            expected.update({f"memory-slice-{i}": 1 for i in range(start, start + size)})
            (consumption,) = device["consumesCounters"]
            assert consumption["counterSet"] == "gpu-0-counter-set"
            assert _values(consumption["counters"]) == expected, device["name"]
            assert "uuid" not in device["attributes"]  # the instance is created at prepare time
            assert not any(c.startswith("memorySlice") for c in device["capacity"])


@pytest.mark.parametrize("gpu", [g for _, g in REAL])
def test_a_full_gpu_partitions_as_nvml_allows(gpu):
    small = next(p.name for p in mig_geometry.profiles_of(gpu).values() if p.profile_id == 19)
    three = next(p.name for p in mig_geometry.profiles_of(gpu).values() if p.profile_id == 9)
    four = next(p.name for p in mig_geometry.profiles_of(gpu).values() if p.profile_id == 5)
    assert _first_fit(gpu, [small] * 7) is not None  # seven 1g slices: seven decoders, seven memory slices
    assert len(_mig_devices(gpu)[small]) == 7  # and no eighth placement
    assert _first_fit(gpu, [three, four]) is not None
    assert _first_fit(gpu, [four, four]) is None
    assert _first_fit(gpu, [three, three, small]) is None  # two 3g take all eight memory slices


@pytest.mark.parametrize("gpu", [g for _, g in REAL])
def test_the_counters_admit_exactly_the_layouts_nvml_places(gpu):
    names = list(mig_geometry.profiles_of(gpu))
    for size in range(1, 5):
        for layout in combinations_with_replacement(names, size):
            by_counters = _first_fit(gpu, list(layout)) is not None
            assert by_counters == (mig_geometry.place(gpu, list(layout)) is not None), layout


def test_the_full_gpu_consumes_the_whole_set_so_no_slice_fits_beside_it():
    slices = _slices("nvidia-h100-80gb")
    counter_set = slices[0]["spec"]["sharedCounters"][0]
    gpu = next(d for d in slices[1]["spec"]["devices"] if d["name"] == "gpu-0")
    assert gpu["capacity"]["memory"] == {"value": "81152Mi"}  # the largest profile's, not NVML's 81559 MiB total
    assert dynamic_mig.fits(counter_set, [gpu])
    assert not any(dynamic_mig.fits(counter_set, [gpu, d]) for ds in _mig_devices("nvidia-h100-80gb").values()
                   for d in ds)


def test_a_node_publishes_one_slice_of_counter_sets_then_one_slice_per_gpu():
    slices = _slices("nvidia-h100-80gb", 8)
    assert len(slices) == 9
    assert [s["spec"]["pool"]["resourceSliceCount"] for s in slices] == [9] * 9
    assert "devices" not in slices[0]["spec"]
    assert [c["name"] for c in slices[0]["spec"]["sharedCounters"]] == [f"gpu-{i}-counter-set" for i in range(8)]
    for minor, s in enumerate(slices[1:]):
        names = [d["name"] for d in s["spec"]["devices"]]
        assert names == sorted(names) and names[0] == f"gpu-{minor}"
        assert len(names) == 26 <= dynamic_mig.MAX_DEVICES_WITH_COUNTERS
        assert {c["counterSet"] for d in s["spec"]["devices"] for c in d["consumesCounters"]} == {
            f"gpu-{minor}-counter-set"}
    assert len({s["metadata"]["name"] for s in slices}) == 9


def test_an_ampere_gpu_publishes_its_slices_but_not_itself_and_a_gpu_without_mig_is_unchanged():
    a100 = _slices("nvidia-a100-80gb")
    assert not any(d["attributes"]["type"]["string"] == "gpu" for d in a100[1]["spec"]["devices"])
    assert devices.node_resource_slices("n", "nvidia-l4", 1, dynamic_mig=True) == devices.node_resource_slices(
        "n", "nvidia-l4", 1)


def test_the_gate_is_read_from_the_charts_feature_gates_value():
    assert not dynamic_mig.enabled({})
    assert not dynamic_mig.enabled({"featureGates": {"DynamicMIG": False}})
    assert dynamic_mig.enabled({"featureGates": {"DynamicMIG": True, "MPSSupport": False}})


def test_counter_names_are_the_drivers_kebab_case():
    assert [dynamic_mig.counter_name(c) for c in ("copyEngines", "jpegEngines", "ofaEngines", "memory")] == [
        "copy-engines", "jpeg-engines", "ofa-engines", "memory"]
