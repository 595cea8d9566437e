"""The node capacity model against public measurements of real nodes (tests/fixtures/node_capacity_measurements.csv).

Each cloud's model must never promise more than a measured node had (a pod sized to it would never
schedule), and must stay within ``TOLERANCE`` of the measurement (so it does not waste the node).
"""

import pytest
from gpu_fungibility import catalog, clouds, node_capacity
from gpu_fungibility.clouds.gke import capacity as gke_capacity
from gpu_fungibility.dra_cel.quantity import Quantity

from tests.machine_data import read_rows, real_host_shape

#: How far below a measured allocatable memory the model may be.
TOLERANCE = 0.015

MEASUREMENTS = read_rows("node_capacity_measurements.csv")

#: AKS before 1.29 (learn.microsoft.com/azure/aks/node-resource-reservations, "AKS versions prior to 1.29"):
#: kube-reserved 25% of the first 4 GB of memory, 20% of the next 4, 10% of the next 8, 6% of the next 112,
#: 2% of the rest, and memory.available<750Mi. The measured AKS nodes of 2019/2020 ran it: their
#: capacity - allocatable is these tiers of the VM's nominal memory (GB read as GiB) plus 750 MiB, to the MiB.
AKS_BEFORE_1_29_TIERS: tuple[tuple[float | None, float], ...] = (
    (4096, 0.25), (4096, 0.20), (8192, 0.10), (114688, 0.06), (None, 0.02))
AKS_BEFORE_1_29_EVICTION_MIB = 750


def _earlier_reserved_mib(row: dict[str, str], host: catalog.HostShape) -> float | None:
    """capacity - allocatable under the reservations the measured node ran, when they are not the current ones."""
    if row["reservations"] == "aks-before-1.29":
        return node_capacity.tiered(host.memory_gib * 1024, AKS_BEFORE_1_29_TIERS) + AKS_BEFORE_1_29_EVICTION_MIB
    assert not row["reservations"], f"unknown reservations {row['reservations']!r}"
    return None


def _mib(quantity: str) -> float:
    return float(Quantity.parse(quantity).value) / 2**20


def _id(row: dict[str, str]) -> str:
    return f"{row['cloud']}-{row['machine']}-{row['source']}"


def test_the_table_holds_the_measurements_the_model_is_judged_by():
    machines = {(r["cloud"], r["machine"]) for r in MEASUREMENTS}
    for needed in [("gke", "n2-highmem-4"), ("gke", "n2-highmem-32"), ("gke", "n1-highmem-4"),
                   ("eks", "r5.xlarge"), ("eks", "r5.4xlarge"), ("aks", "Standard_DS1_v2"), ("aks", "Standard_DS2_v2")]:
        assert needed in machines
    assert len(MEASUREMENTS) >= 20


@pytest.mark.parametrize("row", MEASUREMENTS, ids=_id)
def test_the_model_never_exceeds_a_measured_node_and_stays_close(row):
    profile = clouds.profile(row["cloud"])
    host = real_host_shape(row["cloud"], row["machine"])
    capacity, allocatable = profile.capacity(host), profile.allocatable(host)
    earlier = _earlier_reserved_mib(row, host)
    if earlier is not None:  # the node ran earlier reservations: the current capacity model, those reservations
        allocatable = (allocatable[0], int(capacity[1] - earlier))
    measured_capacity, measured_allocatable = _mib(row["capacity"]), _mib(row["allocatable"])
    assert capacity[1] <= measured_capacity, f"capacity {capacity[1]} MiB above the measured {measured_capacity:.1f}"
    assert allocatable[1] <= measured_allocatable, (
        f"allocatable {allocatable[1]} MiB above the measured {measured_allocatable:.1f}")
    assert allocatable[1] >= measured_allocatable * (1 - TOLERANCE), (
        f"allocatable {allocatable[1]} MiB more than {TOLERANCE:.1%} below the measured {measured_allocatable:.1f}")
    assert capacity[0] == host.vcpus * 1000
    assert allocatable[0] == round(float(row["cpu_allocatable"]) * 1000), "kube-reserved CPU tiers"


@pytest.mark.parametrize("row", [r for r in MEASUREMENTS if r["cloud"] == "gke"], ids=_id)
def test_gke_reserves_its_tiers_of_nominal_memory_from_capacity(row):
    """What a GKE node keeps between capacity and allocatable is the tiers plus eviction, to the MiB."""
    host = real_host_shape("gke", row["machine"])
    measured = _mib(row["capacity"]) - _mib(row["allocatable"])
    modelled = gke_capacity.kube_reserved_mib(host.memory_gib * 1024) + node_capacity.EVICTION_HARD_MIB
    assert abs(measured - modelled) <= 2


@pytest.mark.parametrize("row", [r for r in MEASUREMENTS if r["cloud"] == "eks"], ids=_id)
def test_eks_reserves_nodeadms_per_pod_memory_from_capacity(row):
    host = real_host_shape("eks", row["machine"])
    measured = _mib(row["capacity"]) - _mib(row["allocatable"])
    assert abs(measured - (11 * host.max_pods + 255 + 100)) <= 2


@pytest.mark.parametrize("row", [r for r in MEASUREMENTS if r["cloud"] == "aks"], ids=_id)
def test_aks_reserves_from_capacity_a_share_of_nominal_memory(row):
    """The measured AKS nodes kept their (earlier) tiers of the VM's nominal memory plus eviction between
    capacity and allocatable: reservations come off capacity, as the current model takes them."""
    host = real_host_shape("aks", row["machine"])
    measured = _mib(row["capacity"]) - _mib(row["allocatable"])
    assert abs(measured - _earlier_reserved_mib(row, host)) <= 2


@pytest.mark.parametrize("row", [r for r in MEASUREMENTS if r["daemon_set_memory"]], ids=_id)
def test_the_room_kept_for_the_clouds_pods_covers_the_daemon_sets_measured_on_real_nodes(row):
    kept_cpu, kept_memory = clouds.profile(row["cloud"]).system_pods_reserve
    assert kept_cpu >= float(row["daemon_set_cpu"]) * 1000
    assert kept_memory >= _mib(row["daemon_set_memory"])


def test_the_a100_80gb_node_of_the_shipped_stacks():
    """a2-ultragpu-1g (12 vCPUs, 170 GiB): about 156.9 GiB allocatable, not the 159.7 GiB of nominal tiers."""
    gke = clouds.profile("gke")
    host = catalog.host_shape("a2-ultragpu-1g")
    nominal = 170 * 1024
    kernel = nominal / 64 + 16 + 64 + 248 + 64  # template model (COS, capped correction) + margin
    kube_reserved = 1000 + 800 + 800 + 0.06 * 112000 + 0.02 * (nominal - 128000)
    assert gke.capacity(host) == (12000, int(nominal - kernel))
    assert gke.allocatable(host) == (11900, int(nominal - kernel) - int(kube_reserved) - 100) == (11900, 160627)
    assert round(gke.allocatable(host)[1] / 1024, 1) == 156.9
