"""The library's NVIDIA devices against what real GPUs report and what NVIDIA publishes.

H100 80GB HBM3 and H200: every field the pinned driver (dra-driver-nvidia-gpu v0.4.1) turns into a
ResourceSlice field, against NVML read off a real GPU (shared reality/nvml, copied into
tests/fixtures/nvml). A100 40GB / 80GB and H100 NVL: against NVIDIA's MIG user guide tables and the
``nvidia-smi`` figures components/mig_geometry.py cites.
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from gpu_fungibility import catalog, devices, mig_geometry

FIXTURES = Path(__file__).parent / "fixtures" / "nvml"
MIB = 1024 * 1024
GIB = 1024 * MIB

#: nvmlBrandType_t / nvmlDeviceArchitecture_t values NVML returned, as go-nvlib names them
#: (go-nvlib v0.11.0 pkg/nvlib/device/device.go GetBrandAsString / GetArchitectureAsString).
BRANDS = {14: "Nvidia"}
ARCHITECTURES = {7: "Ampere", 8: "Ada Lovelace", 9: "Hopper", 10: "Blackwell"}

REAL = [("h100-80gb-hbm3.json", "nvidia-h100-80gb"), ("h200.json", "nvidia-h200-141gb")]

#: The attributes the driver publishes (deviceinfo.go:152-198 for a GPU, mig.go:139-185 plus the uuid of
#: deviceinfo.go:211-214 for a MIG device) when NVML reports an addressing mode and sysfs a PCIe root.
GPU_ATTRIBUTES = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
                  "cudaDriverVersion", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot",
                  "addressingMode"}
MIG_ATTRIBUTES = {"type", "uuid", "parentUUID", "profile", "productName", "brand", "architecture",
                  "cudaComputeCapability", "driverVersion", "cudaDriverVersion", "addressingMode",
                  "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot"}
MIG_ENGINES = {"multiprocessors": "multiprocessorCount", "copyEngines": "copyEngineCount",
               "decoders": "decoderCount", "encoders": "encoderCount", "jpegEngines": "jpegCount",
               "ofaEngines": "ofaCount"}


def _nvml(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def go_nvlib_profile_name(memory_mib: int, total_bytes: int, compute: int, media: bool) -> str:
    """go-nvlib v0.11.0 pkg/nvlib/device/mig_profile.go: ``String()`` and ``getMigMemorySizeGB``."""
    fraction = math.ceil(memory_mib * MIB / total_bytes * 8) / 8
    total_gb = (total_bytes + GIB - 1) // GIB
    gb = math.floor(fraction * total_gb + 0.5)  # Go's math.Round: half away from zero
    return f"{compute}g.{gb}gb{'+me' if media else ''}"


@pytest.mark.parametrize(("fixture", "gpu_type"), REAL)
def test_a_whole_gpu_is_published_as_nvml_reports_it(fixture, gpu_type):
    nvml = _nvml(fixture)
    model = catalog.GPUS[gpu_type]
    (entry,) = devices.gpu_entries("c", "n", model, 1)
    attributes = entry["attributes"]
    assert set(attributes) == GPU_ATTRIBUTES
    assert attributes["productName"] == {"string": nvml["name"]}
    assert attributes["brand"] == {"string": BRANDS[nvml["brand"]]}
    assert attributes["architecture"] == {"string": ARCHITECTURES[nvml["architecture"]]}
    major, minor = nvml["cudaComputeCapability"]
    assert attributes["cudaComputeCapability"] == {"version": devices.semver(f"{major}.{minor}")}
    assert attributes["addressingMode"] == {"string": nvml["addressingMode"]}
    assert entry["capacity"] == {"memory": {"value": devices.binary_quantity(nvml["memoryTotalBytes"])}}
    assert model.published_memory_mib * MIB == nvml["memoryTotalBytes"]


@pytest.mark.parametrize(("fixture", "_gpu"), REAL)
def test_versions_and_pci_attributes_are_derived_as_the_driver_derives_them(fixture, _gpu):
    nvml = _nvml(fixture)
    # nvlib.go:506-513 and 610, then Masterminds semver (deviceinfo.go:172-177): leading zeros dropped.
    assert devices.semver(nvml["driverVersion"]) == "580.159.4"
    assert devices.cuda_driver_version(nvml["cudaDriverVersion"]) == "13.0.0"
    # go-nvlib GetPCIBusID, then deviceattribute.GetPCIBusIDAttribute / GetPCIeRootAttributeByPCIBusID.
    assert devices.pci_bus_id(nvml["pciBusId"]) == "0000:00:06.0"
    assert nvml["sysfsPath"].endswith("/" + devices.pci_bus_id(nvml["pciBusId"]))
    assert devices.pcie_root(nvml["sysfsPath"]) == "pci0000:00"
    # The simulated nodes carry one driver version for every cloud (not modelled per cloud), in the same form.
    (entry,) = devices.gpu_entries("c", "n", catalog.GPUS[_gpu], 1)
    assert entry["attributes"]["driverVersion"] == {"version": devices.semver(devices.NVIDIA_DRIVER_VERSION)}


@pytest.mark.parametrize(("fixture", "gpu_type"), REAL)
def test_every_mig_profile_is_the_one_nvml_reports(fixture, gpu_type):
    nvml = _nvml(fixture)
    profiles = mig_geometry.profiles_of(gpu_type)
    assert sorted(profiles) == sorted(p["name"].removeprefix("MIG ") for p in nvml["migProfiles"])
    assert set(catalog.GPUS[gpu_type].mig_profiles) == set(profiles)
    for real in nvml["migProfiles"]:
        p = profiles[real["name"].removeprefix("MIG ")]
        assert p.measured
        assert (p.profile_id, p.memory_mib, p.compute_slices, p.instance_count) == (
            real["id"], real["memorySizeMB"], real["sliceCount"], real["instanceCount"]), p.name
        assert (p.multiprocessors, p.copy_engines, p.decoders, p.encoders, p.jpeg_engines, p.ofa_engines) == tuple(
            real[k] for k in MIG_ENGINES.values()), p.name
        assert [[start, p.memory_slices] for start in p.placements] == real["placements"], p.name
        assert go_nvlib_profile_name(real["memorySizeMB"], nvml["memoryTotalBytes"], real["sliceCount"],
                                     real["name"].endswith("+me")) == p.name


@pytest.mark.parametrize(("fixture", "gpu_type"), REAL)
def test_each_mig_device_carries_what_the_driver_makes_of_nvml(fixture, gpu_type):
    nvml = _nvml(fixture)
    model = catalog.GPUS[gpu_type]
    for real in nvml["migProfiles"]:
        name = real["name"].removeprefix("MIG ")
        for start, size in real["placements"]:
            if mig_geometry.place(gpu_type, [name]) is None:
                continue
            profile = mig_geometry.profile(gpu_type, name)
            entry = devices.mig_capacity(profile, start)
            assert entry == {
                **{cap: {"value": str(real[field])} for cap, field in MIG_ENGINES.items()},
                "memory": {"value": devices.binary_quantity(real["memorySizeMB"] * MIB)},
                **{f"memorySlice{i}": {"value": "1"} for i in range(start, start + size)},
            }
            assert devices.mig_device_name(3, profile, start) == (
                f"gpu-3-mig-{name.replace('.', '').replace('+', '-')}-{real['id']}-{start}")
    for entry in devices.gpu_entries("c", "n", model, 2, [p for p in model.mig_profiles if "+me" not in p][:1]):
        assert set(entry["attributes"]) == MIG_ATTRIBUTES
        assert devices.device_problem(entry) is None


def test_a_real_h100_1g_10gb_slice_has_less_than_10_gib():
    profile = mig_geometry.profile("nvidia-h100-80gb", "1g.10gb")
    assert profile.memory_mib == 9984 < 10 * 1024
    assert mig_geometry.profile("nvidia-h100-80gb", "7g.80gb").memory_mib < catalog.GPUS[
        "nvidia-h100-80gb"].published_memory_mib


# ---- the GPUs no NVML record of the project covers: NVIDIA's MIG user guide, "Supported MIG Profiles"
# (docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html). Per profile:
# fraction of memory, fraction of SMs, NVDECs, JPEG, OFA, copy engines, instances available.
# The A100 table is printed for A100-SXM4-40GB; "for A100-SXM4-80GB, the profile names will change
# according to the memory proportion". The H100 table is the 80GB part's; the 94GB part renames it.
GUIDE_A100 = {
    "1g": (Fraction(1, 8), Fraction(1, 7), 0, 0, 0, 1, 7),
    "1g+me": (Fraction(1, 8), Fraction(1, 7), 1, 1, 1, 1, 1),
    # The guide prints 1/8 for this row; its placement figure (and -lgipp) give two memory slices.
    "1g-double": (Fraction(2, 8), Fraction(1, 7), 1, 0, 0, 1, 4),
    "2g": (Fraction(2, 8), Fraction(2, 7), 1, 0, 0, 2, 3),
    "3g": (Fraction(4, 8), Fraction(3, 7), 2, 0, 0, 3, 2),
    "4g": (Fraction(4, 8), Fraction(4, 7), 2, 0, 0, 4, 1),
    "7g": (Fraction(1), Fraction(7, 7), 5, 1, 1, 7, 1),
}
GUIDE_H100 = {
    "1g": (Fraction(1, 8), Fraction(1, 7), 1, 1, 0, 1, 7),
    "1g+me": (Fraction(1, 8), Fraction(1, 7), 1, 1, 1, 1, 1),
    "1g-double": (Fraction(2, 8), Fraction(1, 7), 1, 1, 0, 1, 4),
    "2g": (Fraction(2, 8), Fraction(2, 7), 2, 2, 0, 2, 3),
    "3g": (Fraction(4, 8), Fraction(3, 7), 3, 3, 0, 3, 2),
    "4g": (Fraction(4, 8), Fraction(4, 7), 4, 4, 0, 4, 1),
    "7g": (Fraction(1), Fraction(7, 7), 7, 7, 1, 8, 1),
}
GUIDE = {"nvidia-tesla-a100": GUIDE_A100, "nvidia-a100-80gb": GUIDE_A100, "nvidia-a100-80gb-pcie": GUIDE_A100,
         "nvidia-h100-80gb": GUIDE_H100, "nvidia-h100-nvl": GUIDE_H100, "nvidia-h200-141gb": GUIDE_H100}

#: Memory a real GPU reported per profile (MiB; nvidia-smi prints GiB with two decimals, MIG memory comes in
#: 128 MiB steps): the library never models more than the lowest. A100 40GB: forums.developer.nvidia.com
#: t/170488 (nvidia-smi mig -lgip: 4.75, 9.75, 19.62, 19.62, 39.50 GiB). A100 80GB PCIe, driver 515.86.01:
#: nvidia-smi mig -lgip 9.50 / 19.50 / 39.25 / 39.25 / 79.00 GiB and gpu-feature-discovery memory labels
#: 9728 / 19968 / 40192 MiB.
REPORTED_MIB = {
    "nvidia-tesla-a100": {"1g.5gb": 4864, "2g.10gb": 9984, "3g.20gb": 20096, "4g.20gb": 20096, "7g.40gb": 40448},
    "nvidia-a100-80gb": {"1g.10gb": 9728, "1g.10gb+me": 9728, "2g.20gb": 19968, "3g.40gb": 40192,
                         "4g.40gb": 40192, "7g.80gb": 80896},
}


def _guide_row(p: mig_geometry.MigProfile) -> str:
    if p.media_extensions:
        return "1g+me"
    if p.compute_slices == 1 and p.memory_slices == 2:
        return "1g-double"
    return f"{p.compute_slices}g"


@pytest.mark.parametrize("gpu_type", sorted(GUIDE))
def test_mig_profiles_follow_nvidias_published_tables(gpu_type):
    model = catalog.GPUS[gpu_type]
    rows = GUIDE[gpu_type]
    profiles = mig_geometry.profiles_of(gpu_type)
    assert sorted(_guide_row(p) for p in profiles.values()) == sorted(rows)
    total_bytes = model.published_memory_mib * MIB
    for p in profiles.values():
        memory, sms, nvdec, jpeg, ofa, copy, instances = rows[_guide_row(p)]
        assert Fraction(p.memory_slices, 8) == memory, p.name
        assert Fraction(p.compute_slices, 7) == sms, p.name
        assert (p.decoders, p.jpeg_engines, p.ofa_engines, p.copy_engines, p.instance_count) == (
            nvdec, jpeg, ofa, copy, instances), p.name
        assert p.memory_mib % 128 == 0, p.name
        # the name the driver publishes is go-nvlib's, computed from this memory and the NVML total
        assert go_nvlib_profile_name(p.memory_mib, total_bytes, p.compute_slices, p.media_extensions) == p.name
        assert p.memory_mib <= REPORTED_MIB.get(gpu_type.removesuffix("-pcie"), {}).get(p.name, p.memory_mib)


def test_memory_not_measured_is_marked_and_below_the_nominal_share():
    for gpu_type, profiles in mig_geometry.GEOMETRY.items():
        total = catalog.GPUS[gpu_type].published_memory_mib
        for p in profiles.values():
            assert p.memory_mib <= total * p.memory_slices // 8, (gpu_type, p.name)
    assert not any(p.measured for p in mig_geometry.profiles_of("nvidia-h100-nvl").values())
