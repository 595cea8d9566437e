"""The GKE preflight's project-wide GPU quota (GPUS_ALL_REGIONS) and live-shape checks, on the Compute fake.

Same fixtures and helpers as tests/test_preflight_gke.py: every request crosses HTTP to 127.0.0.1.
"""

from __future__ import annotations

import copy

from tests.preflight_output import line_of, verdicts
from tests.test_preflight_gke import BASE, REGION, offer_everywhere, run
from tests.test_preflight_gke import fake as fake  # noqa: F401 - the fixture, shared


def test_gpus_all_regions_below_one_node_is_not_served(fake, tmp_path, capsys):
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    fake.set_project_quota("GPUS_ALL_REGIONS", limit=0)  # what a new project often has
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 1, out
    assert verdicts(out) == {"a100-80gb": "NOT SERVED"}
    assert "quota GPUS_ALL_REGIONS in all regions leaves 0 GPUs (0 - 0 in use); one node needs 1" \
        in line_of(out, "a100-80gb")
    assert "/compute/v1/projects/demo-project" in [p for m, p, _ in fake.requests if m == "GET"]


def test_gpus_all_regions_is_shared_by_every_gpu_pool_and_counts_usage_elsewhere(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a100-80gb-b"] = copy.deepcopy(raw["nodePools"]["a100-80gb"])
    raw["computeClasses"]["gpus"]["pools"].append("a100-80gb-b")
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=16)
    fake.set_project_quota("GPUS_ALL_REGIONS", limit=4, usage=3)  # 3 GPUs already running in other regions
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert "pools a100-80gb, a100-80gb-b share GPUS_ALL_REGIONS in all regions: together they need 2 GPUs at " \
           "min nodes, 1 left" in line_of(out, "a100-80gb")


def test_gpus_all_regions_missing_from_the_project_warns_and_tpu_pools_do_not_read_it(fake, tmp_path, capsys):
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    fake.project_quotas.clear()
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 0 and verdicts(out) == {"a100-80gb": "WARN"}
    assert "quota not checked: the project lists no GPUS_ALL_REGIONS quota" in line_of(out, "a100-80gb")

    fake.requests.clear()
    raw = copy.deepcopy(BASE)
    raw["nodePools"] = {"v5e": {"machineType": "ct5lp-hightpu-4t",
                                "accelerator": {"type": "tpu-v5-lite-podslice", "count": 4},
                                "autoscaling": {"min": 1, "max": 1}, "zones": ["us-central1-a"]}}
    raw["computeClasses"] = {}
    fake.offer("us-central1-a", "ct5lp-hightpu-4t")
    fake.set_quota(REGION, "PREEMPTIBLE_TPU_LITE_PODSLICE_V5", limit=8)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0 and verdicts(out) == {"v5e": "SERVED"}
    assert not any(p.endswith("/projects/demo-project") for _, p, _ in fake.requests)


def test_live_machine_shape_that_differs_from_the_catalog_is_a_warning(fake, tmp_path, capsys):
    from gpu_fungibility import catalog

    host = catalog.host_shape("a2-ultragpu-1g")
    live_mib = round(host.memory_gib * 1024) - 4096
    for zone in ("us-central1-a", "us-central1-c"):
        fake.offer(zone, "a2-ultragpu-1g", guest_cpus=host.vcpus + 2, memory_mb=live_mib)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 0 and verdicts(out) == {"a100-80gb": "WARN"}
    line = line_of(out, "a100-80gb")
    expected = (f"a2-ultragpu-1g: Compute Engine says {host.vcpus + 2} vCPUs, {live_mib / 1024:g} GiB, the catalog "
                f"{host.vcpus} vCPUs, {host.memory_gib:g} GiB")
    assert expected in line and line.count(expected) == 1  # said once, not once per zone
