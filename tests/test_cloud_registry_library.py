"""A cloud registered at runtime brings its machines, calendar and components to the library's shared modules
(catalog, support calendar, the package's component list) without an edit to them."""

import datetime as dt

import gpu_fungibility
import pytest
from gpu_fungibility import catalog, clouds, support_calendar
from gpu_fungibility.support_calendar import MinorSupport

from tools import machine_table

SOURCE = "a fictitious cloud's calendar, for this test"


class Nimbus(clouds.CloudProfile):
    name, title = "nimbus", "Nimbus"
    families = ("gpu",)
    pool_machine_argument = "flavor"
    machines = catalog.shapes(
        catalog.MachineShape("nb-l4-2", "nvidia-l4", 2, "nimbus", vcpus=16, memory_gib=64, max_pods=50))
    support_calendar = {"1.35": MinorSupport(dt.date(2027, 5, 1), "on", SOURCE, SOURCE),
                        "1.36": MinorSupport(dt.date(2027, 9, 1), "unconfirmed", SOURCE, SOURCE)}
    channel_default_minor = {"STEADY": "1.36"}
    library_components = {"NimbusCluster": "nimbus_cluster"}
    library_args = {"NimbusClusterArgs": "nimbus_cluster"}


@pytest.fixture
def nimbus(monkeypatch):
    profile = Nimbus()
    monkeypatch.setitem(clouds.PROFILES, profile.name, profile)
    return profile


def test_its_machines_offer_their_gpus_and_have_a_host_shape(nimbus):
    assert "nimbus" in catalog.GPUS["nvidia-l4"].clouds
    assert "nimbus" not in catalog.GPUS["nvidia-h100-80gb"].clouds
    assert catalog.offered_on("nimbus") == ["nvidia-l4"]
    assert catalog.machine_shape("nimbus", "nb-l4-2").count == 2
    assert catalog.host_shape("nb-l4-2") == catalog.HostShape("nb-l4-2", 16, 64, 50)


def test_the_shipped_clouds_offer_what_they_did(nimbus):
    assert catalog.GPUS["nvidia-tesla-t4"].clouds == ("gke", "eks", "aks")
    assert catalog.GPUS["nvidia-a10g"].clouds == ("eks",)
    assert catalog.TPUS["tpu-v6e-slice"].clouds == ("gke",)
    assert catalog.host_shape("n1-standard-8") == catalog.HostShape("n1-standard-8", 8, 30.0)


def test_its_calendar_is_asked(nimbus):
    assert support_calendar.support("nimbus", "1.35.2").standard_support_ends == dt.date(2027, 5, 1)
    assert "nimbus" in support_calendar.calendar()
    assert support_calendar.effective_minor("nimbus", "1.35.2", "steady") == "1.36"
    assert support_calendar.effective_minor("nimbus", "1.35.2") == "1.35"
    assert support_calendar.support_problem("nimbus", "1.35", dt.date(2027, 5, 1))
    assert any("unconfirmed" in note for note in support_calendar.support_advisories("nimbus", "1.36",
                                                                                      dt.date(2026, 11, 26)))


def test_an_unregistered_cloud_has_no_calendar_and_no_channel_default():
    assert support_calendar.support("nimbus", "1.35") is None
    assert support_calendar.effective_minor("nimbus", "1.34", "steady") == "1.34"


def test_its_components_join_the_package(nimbus):
    assert gpu_fungibility.component_modules()["NimbusCluster"] == "nimbus_cluster"
    assert "NimbusClusterArgs" in gpu_fungibility.__all__
    assert gpu_fungibility.component_modules()["GkeGpuNodePool"] == "clouds.gke.pools"


def test_the_machine_table_doc_lists_the_shipped_clouds_only(nimbus):
    assert "Nimbus" not in machine_table.render()
    assert machine_table.embedded(machine_table.DOC.read_text()) == machine_table.render()
