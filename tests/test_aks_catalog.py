"""AKS's GPU VM sizes against Azure's published size tables and Resource SKUs (recorded by
tools/record_aks_sizes.py into tests/fixtures/aks_vm_sizes.json), and the AKS node model against AKS's
documented reservations (node capacity against measured AKS nodes: tests/test_node_capacity.py)."""

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from gpu_fungibility import catalog, clouds
from gpu_fungibility.clouds.aks import capacity as aks_capacity
from gpu_fungibility.clouds.aks import machines as aks_machines
from gpu_fungibility.clouds.aks import node_pools as aks_node_pools

from tests import machine_data
from tools import record_aks_sizes as recorder

FIXTURES = Path(__file__).with_name("fixtures")
SIZES = json.loads((FIXTURES / "aks_vm_sizes.json").read_text())
ROWS = [dict(zip(SIZES["columns"], row, strict=True)) for row in SIZES["rows"]]
SKUS = {row[0]: dict(zip(SIZES["resource_skus"]["columns"], row, strict=True))
        for row in SIZES["resource_skus"]["rows"]}
AKS = clouds.profile("aks")
#: The GPU each series' page names, by catalog type.
SERIES_GPU = {"nca100v4-series.md": "nvidia-a100-80gb-pcie", "ncadsh100v5-series.md": "nvidia-h100-nvl",
              "ndh100v5-series.md": "nvidia-h100-80gb", "nvadsa10v5-series.md": "nvidia-a10",
              "ncast4v3-series.md": "nvidia-tesla-t4"}
COMMIT = re.compile(r"[0-9a-f]{40}")


def whole_gpu(row) -> bool:
    return isinstance(row["gpus"], int)


@pytest.mark.parametrize("row", [r for r in ROWS if whole_gpu(r)], ids=lambda r: r["size"])
def test_every_published_whole_gpu_size_is_in_the_catalog_as_azure_sells_it(row):
    shape = aks_machines.machine_shape(row["size"])
    assert shape is not None, f"{row['size']} is missing from clouds/aks/machines.py"
    assert (shape.vcpus, shape.memory_gib, shape.count) == (row["vcpus"], row["memory_gib"], row["gpus"])
    assert shape.accelerator == SERIES_GPU[row["series"]], f"{row['size']}: {SIZES['gpu_model'][row['series']]}"
    assert shape.max_pods == aks_machines.MAX_PODS


def test_the_catalog_has_no_aks_size_the_published_tables_lack():
    assert set(aks_machines.MACHINES) == {row["size"] for row in ROWS if whole_gpu(row)}


def test_sizes_below_a_whole_gpu_are_left_out_and_run_the_grid_driver():
    # NVadsA10 v5's 1/6, 1/3 and 1/2 sizes: a vGPU slice with its share of the board's memory.
    slices = [row for row in ROWS if not whole_gpu(row)]
    assert {row["size"] for row in slices} == {"Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5",
                                               "Standard_NV18ads_A10_v5"}
    board = catalog.GPUS["nvidia-a10"].memory_gib
    for row in slices:
        assert Fraction(row["gpus"]) < 1 and row["gpu_memory_gib"] == Fraction(row["gpus"]) * board
        assert aks_machines.machine_shape(row["size"]) is None
        assert aks_node_pools.runs_grid_driver(row["size"])
        # Azure's Resource SKUs count the slice as one GPU: only the page says it is a slice.
        assert SKUS[row["size"]]["gpus"] == 1


def test_the_gpu_memory_matches_the_series_page():
    for row in ROWS:
        model = catalog.GPUS[SERIES_GPU[row["series"]]]
        assert row["gpu_memory_gib"] == Fraction(row["gpus"]) * model.memory_gib, row["size"]
        assert f"({model.memory_gib}GB)" in SIZES["gpu_model"][row["series"]]
        assert "aks" in model.clouds
        assert model.published_memory_mib <= model.memory_gib * 1024, "NVML total is never above the marketed size"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["size"])
def test_the_size_pages_agree_with_azure_s_resource_skus(row):
    # cluster-autoscaler's generator keeps the whole GiB of MemoryGB, x 1024.
    sku = SKUS[row["size"]]
    assert (sku["vcpus"], sku["memory_mib"]) == (row["vcpus"], int(row["memory_gib"]) * 1024)
    assert sku["gpus"] == max(1, Fraction(row["gpus"]))


def test_the_sizes_the_project_names_outside_the_catalog_are_azure_s():
    from gpu_fungibility.clouds.aks.cluster import DEFAULT_SYSTEM_VM_SIZE

    assert SKUS[DEFAULT_SYSTEM_VM_SIZE]["gpus"] == 0
    assert (SKUS[DEFAULT_SYSTEM_VM_SIZE]["vcpus"], SKUS[DEFAULT_SYSTEM_VM_SIZE]["memory_mib"]) == (4, 16 * 1024)
    for size, row in machine_data.azure_general_vm_sizes().items():
        assert SKUS[size]["vcpus"] == int(row["vcpus"]), size
        assert SKUS[size]["memory_mib"] == int(float(row["memory_gib"])) * 1024, size


def test_the_grid_driver_sizes_are_agentbaker_s():
    recorded = set(SIZES["grid_driver_sizes"]["sizes"])
    assert aks_node_pools.GRID_DRIVER_SIZES == recorded
    assert {size.lower() for size in aks_machines.MACHINES if aks_node_pools.runs_grid_driver(size)} == \
        {size.lower() for size in aks_machines.MACHINES} & recorded
    assert all(aks_node_pools.runs_grid_driver(size) for size in recorded)
    assert not any(aks_node_pools.runs_grid_driver(row["size"]) for row in ROWS if row["series"] != "nvadsa10v5-series.md")


def test_the_fixture_says_where_every_figure_comes_from():
    assert SIZES["recorded_by"] == recorder.TOOL and re.fullmatch(r"\d{4}-\d{2}-\d{2}", SIZES["recorded_on"])
    pages = SIZES["size_pages"]
    assert pages["repository"] == recorder.DOCS_REPOSITORY and pages["read_from"]
    assert set(pages["pages"]) == set(recorder.PAGES) == set(SERIES_GPU) == set(SIZES["gpu_model"])
    for page, meta in pages["pages"].items():
        for file in (meta, meta["specs_include"]):
            assert {"path", "commit", "committed", "read_at"} <= set(file)
            assert COMMIT.fullmatch(file["commit"]) and file["path"].startswith(recorder.PAGE_DIR)
            # Copies of the files carry their commit, not its date; a clone gives both.
            assert (file["committed"] is None) == (pages["read_from"] != "git")
        assert meta["path"].endswith(page) and SIZES["commits"][page] == meta["commit"]
    for source, repository in (("resource_skus", recorder.SKU_REPOSITORY),
                               ("grid_driver_sizes", recorder.GRID_REPOSITORY)):
        meta = SIZES[source]
        assert meta["repository"] == repository and COMMIT.fullmatch(meta["commit"])
        assert COMMIT.fullmatch(meta["read_at"]) and re.match(r"\d{4}-\d{2}-\d{2}T", meta["committed"])
    assert {row["series"] for row in ROWS} == set(recorder.PAGES)
    assert set(SKUS) == {row["size"] for row in ROWS} | set(recorder.OTHER_SIZES)


def test_azure_names_its_pcie_parts_apart_from_the_sxm_parts():
    assert catalog.GPUS["nvidia-a100-80gb-pcie"].product_name != catalog.GPUS["nvidia-a100-80gb"].product_name
    assert catalog.GPUS["nvidia-h100-nvl"].product_name != catalog.GPUS["nvidia-h100-80gb"].product_name


def test_cpu_reservations_follow_aks_table():
    # learn.microsoft.com/azure/aks/node-resource-reservations, "CPU reservations".
    table = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
    assert {cores: aks_capacity.cpu_reserved_millicores(cores) for cores in table} == table
    assert aks_capacity.cpu_reserved_millicores(24) == 420  # between rows: the larger reservation
    assert aks_capacity.cpu_reserved_millicores(96) == 1060


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
