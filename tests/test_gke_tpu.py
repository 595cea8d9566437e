"""TPU pools and the TPU DRA driver (seed 003), from the dev stack (seed 000 + a TPU v6e pool)."""

from __future__ import annotations

import pytest
from gpu_fungibility.clouds.gke.pools import tpu_placement

from offline_plan.run import PlanRun, run_stack_file


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return run_stack_file("dev")


def test_tpu_pool_follows_seed_003(run):
    res = run.named("tpu-v6e-nodepool")
    node = res.inputs["nodeConfig"]
    assert res.inputs["name"] == "tpu-v6e", res.urn
    assert node["machineType"] == "ct6e-standard-1t", res.urn
    assert node["labels"] == {"cloud.google.com/gke-tpu-dra-driver": "true"}, res.urn
    assert node["spot"] is True, res.urn
    assert "guestAccelerators" not in node, f"{res.urn}: TPU machine types carry their chips"
    assert "placementPolicy" not in res.inputs, f"{res.urn}: a single-host slice needs no placement policy"
    assert res.inputs["nodeLocations"] == ["us-central1-b"], res.urn


def test_tpu_driver_release_follows_seed_003(run):
    res = run.named("tpu-dra-release")
    assert res.inputs["chart"] == "oci://registry.k8s.io/dra-driver-google/charts/dra-driver-google-tpu", res.urn
    assert res.inputs["version"] == "0.2.0", res.urn
    assert res.inputs["namespace"] == "dra-driver-google-tpu", res.urn
    plugin = res.inputs["values"]["kubeletPlugin"]
    assert plugin["priorityClassName"] == "", res.urn
    assert plugin["tolerations"] == [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
    exprs = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "cloud.google.com/gke-tpu-dra-driver", "operator": "In", "values": ["true"]} in exprs, res.urn


def test_tpu_driver_waits_for_the_tpu_pool(run):
    assert run.named("tpu-v6e-nodepool").urn in run.named("tpu-dra").dependencies


def test_gpu_drivers_stay_off_the_tpu_pool(run):
    exprs = run.named("nvidia-driver-installer-daemonset").inputs["spec"]["template"]["spec"]["affinity"][
        "nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    pools = next(e["values"] for e in exprs if e["key"] == "cloud.google.com/gke-nodepool")
    assert pools == ["a100-40gb", "a100-80gb"]  # nodePools as the CLI hands them over: keys sorted
    tolerations = run.named("nvidia-dra-release").inputs["values"]["kubeletPlugin"]["tolerations"]
    assert not any(t["key"] == "google.com/tpu" for t in tolerations)


def test_every_kubernetes_resource_uses_the_cluster_provider(run):
    provider = run.named("gke-k8s")
    for res in (r for r in run.resources if r.type.startswith("kubernetes:")):
        assert res.provider.startswith(provider.urn + "::"), f"{res.urn} uses {res.provider or 'the default provider'}"


def test_placement_only_for_multi_host_slices():
    assert tpu_placement("ct6e-standard-4t", None) is None
    assert tpu_placement("ct6e-standard-4t", "2x2") is None, "the machine's own topology is single-host"
    multi = tpu_placement("ct6e-standard-4t", "4x4")
    assert multi is not None and multi.tpu_topology == "4x4" and multi.type == "COMPACT"


def test_workloads_wait_for_drivers_and_compute_classes(run):
    """The composition hands drivers and classes to the workloads as dependencies."""
    required = {run.named(n).urn for n in ("nvidia-dra-release", "tpu-dra-release", "vllm-gpu-ccc-computeclass",
                                           "nvidia-driver-installer-daemonset")}
    deployments = run.of_type("kubernetes:apps/v1:Deployment")
    assert deployments, "the dev stack has workloads"
    for deployment in deployments:
        # Directly or through what it waits for (the claim template waits for the drivers and classes).
        waits_for, todo = set(), list(deployment.dependencies)
        while todo:
            urn = todo.pop()
            if urn not in waits_for:
                waits_for.add(urn)
                todo += run.by_urn(urn).dependencies
        assert required <= waits_for, f"{deployment.urn} does not wait for {sorted(required - waits_for)}"
