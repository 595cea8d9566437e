"""AKS's GPU VM sizes against Azure's published size tables, and the AKS node model against AKS's documented
reservations (node capacity against measured AKS nodes: tests/test_node_capacity.py)."""

import json
from pathlib import Path

import pytest
from gpu_fungibility import catalog, clouds, node_capacity

FIXTURES = Path(__file__).with_name("fixtures")
SIZES = json.loads((FIXTURES / "aks_vm_sizes.json").read_text())
AKS = clouds.profile("aks")
#: The GPU each series' page names, by catalog type.
SERIES_GPU = {"nca100v4-series.md": "nvidia-a100-80gb-pcie", "ncadsh100v5-series.md": "nvidia-h100-nvl",
              "ndh100v5-series.md": "nvidia-h100-80gb", "nvadsa10v5-series.md": "nvidia-a10",
              "ncast4v3-series.md": "nvidia-tesla-t4"}


@pytest.mark.parametrize("row", SIZES["rows"], ids=lambda r: r[0])
def test_every_published_size_is_in_the_catalog_as_azure_sells_it(row):
    size, series, vcpus, memory_gib, gpus = row
    shape = catalog.aks_vm_size_shape(size)
    assert shape is not None, f"{size} is missing from catalog.AKS_VM_SIZES"
    assert (shape.vcpus, shape.memory_gib, shape.count) == (vcpus, memory_gib, gpus), size
    assert shape.accelerator == SERIES_GPU[series], f"{size}: {SIZES['gpu_model'][series]}"


def test_the_catalog_has_no_aks_size_the_published_tables_lack():
    assert set(catalog.AKS_VM_SIZES) == {row[0] for row in SIZES["rows"]}


def test_the_gpu_memory_matches_the_series_page():
    marketed = {"nvidia-a100-80gb-pcie": 80, "nvidia-h100-nvl": 94, "nvidia-h100-80gb": 80, "nvidia-a10": 24,
                "nvidia-tesla-t4": 16}
    for gpu, gib in marketed.items():
        model = catalog.GPUS[gpu]
        assert model.memory_gib == gib and "aks" in model.clouds
        assert model.published_memory_mib <= gib * 1024, "NVML total is never above the marketed size"


def test_azure_names_its_pcie_parts_apart_from_the_sxm_parts():
    assert catalog.GPUS["nvidia-a100-80gb-pcie"].product_name != catalog.GPUS["nvidia-a100-80gb"].product_name
    assert catalog.GPUS["nvidia-h100-nvl"].product_name != catalog.GPUS["nvidia-h100-80gb"].product_name


def test_cpu_reservations_follow_aks_table():
    # learn.microsoft.com/azure/aks/node-resource-reservations, "CPU reservations".
    table = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
    assert {cores: node_capacity.aks_cpu_reserved_millicores(cores) for cores in table} == table
    assert node_capacity.aks_cpu_reserved_millicores(24) == 420  # between rows: the larger reservation
    assert node_capacity.aks_cpu_reserved_millicores(96) == 1060


def test_memory_reservation_is_the_lesser_of_the_pod_formula_and_a_quarter_plus_eviction():
    # The page's examples: 8 GB with 30 pods reserves 20 x 30 + 50 = 650; 4 GB with 70 pods 25% of 4 GB.
    for memory_gib, pods, reserved in ((8, 30, 650), (4, 70, 1024)):
        host = catalog.HostShape("example", 2, memory_gib, pods)
        assert AKS.capacity(host)[1] - AKS.allocatable(host)[1] == reserved + 100


def test_an_a100_node_offers_what_aks_leaves_after_110_pods():
    host = catalog.host_shape("Standard_NC24ads_A100_v4")
    cpu, memory = AKS.allocatable(host)
    assert cpu == 24000 - 420
    assert memory == AKS.capacity(host)[1] - (20 * 110 + 50) - 100
