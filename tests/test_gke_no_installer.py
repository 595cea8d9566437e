"""A GKE stack without DRA GPU pools (TPU + a classic GPU pool) in a network it does not own."""

from __future__ import annotations

import pytest

from offline_plan.run import PlanRun, run_stack

NETWORK = "projects/shared-vpc-host/global/networks/shared"
SUBNETWORK = "projects/shared-vpc-host/regions/us-central1/subnetworks/gke"


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return run_stack({
        "cluster": {
            "cloud": "gke", "name": "mixed", "location": "us-central1-b",
            "zones": ["us-central1-b", "us-central1-c"], "privateNodes": False,
            "controlPlane": {"publicEndpoint": True, "authorizedNetworks": ["198.51.100.0/24"]},
            "network": {"existingNetwork": NETWORK, "existingSubnetwork": SUBNETWORK},
        },
        "nodePools": {
            "tpu": {"machineType": "ct6e-standard-4t", "accelerator": {"type": "tpu-v6e-slice", "count": 4},
                    "zones": ["us-central1-b"]},
            "t4-classic": {"machineType": "n1-standard-8", "accelerator": {"type": "nvidia-tesla-t4", "count": 1},
                           "dra": False},
        },
    })


def test_no_driver_installer_or_nvidia_dra_without_dra_gpu_pools(run):
    assert not run.of_type("gpu-fungibility:index:NvidiaDriverInstaller")
    assert not run.of_type("kubernetes:apps/v1:DaemonSet")
    assert not run.of_type("gpu-fungibility:index:NvidiaDraDriver")
    assert [r.name for r in run.of_type("kubernetes:helm.sh/v3:Release")] == ["tpu-dra-release"]


def test_classic_gpu_pool_keeps_gkes_driver_and_device_plugin(run):
    res = run.named("t4-classic-nodepool")
    node = res.inputs["nodeConfig"]
    assert node["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}, res.urn
    assert not any(k.startswith(("nvidia.com/", "gke-no-default")) or "dra" in k for k in node["labels"]), res.urn


def test_existing_network_is_used_as_is(run):
    assert not run.of_type("gcp:compute/network:Network")
    assert not run.of_type("gcp:compute/subnetwork:Subnetwork")
    assert not run.of_type("gcp:compute/routerNat:RouterNat"), "a network you bring keeps its own egress"
    cluster = run.named("gke-cluster")
    assert cluster.inputs["network"] == NETWORK and cluster.inputs["subnetwork"] == SUBNETWORK, cluster.urn
    assert cluster.inputs["ipAllocationPolicy"] == {
        "clusterIpv4CidrBlock": "10.4.0.0/14", "servicesIpv4CidrBlock": "10.8.0.0/20"}, cluster.urn


def test_zonal_cluster_with_public_nodes_and_allow_listed_endpoint(run):
    cluster = run.named("gke-cluster")
    assert cluster.inputs["location"] == "us-central1-b", cluster.urn
    assert cluster.inputs["nodeLocations"] == ["us-central1-c"], f"{cluster.urn}: the cluster's own zone is implied"
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": False, "enablePrivateEndpoint": False}
    cidrs = [b["cidrBlock"] for b in cluster.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
    assert cidrs == ["198.51.100.0/24"], f"{cluster.urn}: a public endpoint is allow-listed"
