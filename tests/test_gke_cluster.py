"""The hardened GKE cluster (Pulumi.prod.yaml) under mocks, and the cluster helpers."""

from __future__ import annotations

import json

import pytest
from gpu_fungibility.clouds.gke.cluster import cluster_issues, kubeconfig, node_account_id
from gpu_fungibility.clouds.gke.network import network_issues, region_of
from gpu_fungibility.clouds.gke.pools import initial_nodes_per_zone

from offline_plan.run import PlanRun, read_stack_file, run_stack, run_stack_file
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config


def gke_stack(**cluster) -> dict:
    """A minimal GKE stack config; ``cluster`` keys override the cluster's."""
    return {
        "cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-c"], **cluster},
        "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}},
    }


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return run_stack_file("prod")


@pytest.fixture(scope="module")
def cluster(run):
    return run.named("gke-cluster")


def test_no_default_pool_and_deletion_protection(cluster):
    assert cluster.inputs["removeDefaultNodePool"] is True, cluster.urn
    assert cluster.inputs["initialNodeCount"] == 1, cluster.urn
    assert cluster.inputs["deletionProtection"] is True, cluster.urn


def test_version_channel_and_zones(cluster):
    assert cluster.inputs["minMasterVersion"] == "1.35", cluster.urn
    assert cluster.inputs["releaseChannel"] == {"channel": "STABLE"}, cluster.urn
    assert cluster.inputs["location"] == "us-central1", cluster.urn
    assert cluster.inputs["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"], cluster.urn


def test_private_nodes_and_private_allow_listed_endpoint(cluster):
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    authorized = cluster.inputs["masterAuthorizedNetworksConfig"]
    assert [b["cidrBlock"] for b in authorized["cidrBlocks"]] == ["10.30.0.0/24"], cluster.urn
    assert authorized["gcpPublicCidrsAccessEnabled"] is False, cluster.urn


def test_workload_identity_and_shielded_nodes(cluster):
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": "demo-project.svc.id.goog"}, cluster.urn
    assert cluster.inputs["enableShieldedNodes"] is True, cluster.urn
    assert cluster.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}, cluster.urn


def test_nodes_use_a_least_privilege_account(run, cluster):
    account = run.named("gke-nodes-sa")
    email = f"{account.inputs['accountId']}@demo-project.iam.gserviceaccount.com"
    for res in run.of_type("gcp:container/nodePool:NodePool") + [cluster]:
        assert res.inputs["nodeConfig"]["serviceAccount"] == email, res.urn
    roles = sorted(m.inputs["role"] for m in run.of_type("gcp:projects/iAMMember:IAMMember"))
    assert roles == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount"]
    for binding in run.of_type("gcp:projects/iAMMember:IAMMember"):
        assert binding.inputs["member"] == f"serviceAccount:{email}", binding.urn
        assert binding.urn in cluster.dependencies, "nodes get their roles before they boot"


def test_vpc_native_network_with_nat_for_private_nodes(run, cluster):
    subnet = run.named("network-subnet")
    assert subnet.inputs["ipCidrRange"] == "10.20.0.0/20", subnet.urn
    assert subnet.inputs["region"] == "us-central1" and subnet.inputs["privateIpGoogleAccess"] is True
    assert subnet.inputs["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.24.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.20.16.0/20"},
    ], subnet.urn
    assert cluster.inputs["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"}, cluster.urn
    assert cluster.inputs["subnetwork"] and cluster.inputs["network"], cluster.urn
    nat = run.named("network-nat")
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY", nat.urn
    assert nat.inputs["subnetworks"][0]["sourceIpRangesToNats"] == ["ALL_IP_RANGES"], nat.urn
    assert nat.urn in run.named("gke").dependencies, "the cluster (and so its nodes) waits for NAT egress"


def test_system_pool(run):
    res = run.named("gke-system")
    assert res.inputs["name"] == "system", res.urn
    assert res.inputs["nodeConfig"]["machineType"] == "e2-standard-4", res.urn
    assert (res.inputs["autoscaling"]["totalMinNodeCount"], res.inputs["autoscaling"]["totalMaxNodeCount"]) == (2, 4)
    assert "guestAccelerators" not in res.inputs["nodeConfig"], res.urn


def test_spot_pools_with_an_on_demand_fallback_class(run):
    spec = run.named("vllm-gpu-ccc-computeclass").inputs["spec"]
    assert spec["priorities"] == [{"nodepools": [p]} for p in ("a100-80gb-spot", "a100-40gb-spot",
                                                                  "a100-80gb-ondemand")]
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["activeMigration"] == {"optimizeRulePriority": True}
    spot = {r.inputs["name"]: r.inputs["nodeConfig"]["spot"] for r in run.of_type("gcp:container/nodePool:NodePool")}
    assert spot == {"system": False, "a100-80gb-spot": True, "a100-40gb-spot": True, "a100-80gb-ondemand": False}


def test_kubernetes_provider_credentials_are_secret(run):
    provider = run.named("gke-k8s")
    assert provider.type == "pulumi:providers:kubernetes"
    assert provider.inputs["kubeconfig"] == "[secret]", provider.urn


# ---- helpers ----

def test_kubeconfig_uses_endpoint_ca_and_the_auth_plugin():
    doc = json.loads(kubeconfig("c", "10.0.0.2", "Q0E="))
    assert doc["clusters"][0]["cluster"] == {"server": "https://10.0.0.2", "certificate-authority-data": "Q0E="}
    exec_ = doc["users"][0]["user"]["exec"]
    assert exec_["command"] == "gke-gcloud-auth-plugin"
    assert exec_["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert "token" not in doc["users"][0]["user"], "no static credentials"
    assert doc["current-context"] == "c"


def test_node_account_id_fits_gcp_limits():
    for name in ("c", "gpu-fungibility", "a" * 40, "abc-" + "d" * 19 + "-e" * 5):
        account = node_account_id(name)
        assert 6 <= len(account) <= 30 and account[0].isalpha() and not account.endswith("-"), account


def test_zonal_and_regional_locations():
    assert region_of("us-central1-c") == "us-central1"
    assert region_of("europe-west4") == "europe-west4"
    zonal = run_stack(gke_stack(location="us-central1-c", zones=["us-central1-c", "us-central1-b"]), stack="zonal")
    cluster = zonal.named("gke-cluster")
    assert cluster.inputs["nodeLocations"] == ["us-central1-b"], cluster.urn
    regional = run_stack(gke_stack(), stack="regional").named("gke-cluster")
    assert regional.inputs["nodeLocations"] == ["us-central1-c"], regional.urn


def test_overlapping_ranges_are_reported_with_their_key():
    args = {"name": "c", "region": "us-central1", "cidr": "10.0.0.0/16", "pods_cidr": "10.0.0.0/14"}
    assert [path for path, _ in network_issues(args)] == ["pods_cidr"]
    cfg = parse_stack_config(gke_stack(network={"cidr": "10.0.0.0/16", "podsCidr": "10.0.0.0/14"}), checks=False)
    assert [path for path, _ in arguments.cloud_arguments(cfg).network(cfg).issues()] == ["cluster.network.podsCidr"]


@pytest.mark.parametrize("low,high,zones,expected", [(1, 2, 1, 1), (0, 2, 1, 0), (4, 8, 2, 2), (1, 1, 2, 0),
                                                     (3, 9, 3, 1)])
def test_initial_nodes_never_exceed_max(low, high, zones, expected):
    assert initial_nodes_per_zone(low, high, zones) == expected
    assert initial_nodes_per_zone(low, high, zones) * zones <= high


def test_private_endpoint_needs_private_nodes():
    public_nodes = {"name": "c", "location": "us-central1", "zones": ["us-central1-c"], "private_nodes": False}
    assert [path for path, _ in cluster_issues(public_nodes)] == ["private_nodes"]
    allow_listed = {**public_nodes, "public_endpoint": True, "authorized_networks": ["192.0.2.0/24"]}
    assert cluster_issues(allow_listed) == []
    assert [p for p, _ in cluster_issues({**public_nodes, "release_channel": "UNSPECIFIED"})] == [
        "release_channel", "private_nodes"]
    cfg = parse_stack_config(gke_stack(privateNodes=False, releaseChannel="UNSPECIFIED"), checks=False)
    assert [p for p, _ in arguments.cloud_arguments(cfg).cluster(cfg).issues()] == ["cluster.releaseChannel", "cluster.privateNodes"]


def test_cluster_labels_reach_gcp_as_resource_labels(run, cluster):
    assert cluster.inputs["resourceLabels"] == {"env": "prod", "app": "gpu-fungibility"}, cluster.urn
    for pool in run.of_type("gcp:container/nodePool:NodePool"):
        assert pool.inputs["nodeConfig"]["resourceLabels"] == cluster.inputs["resourceLabels"], pool.urn


@pytest.mark.parametrize("labels, path", [
    ({"Team": "ml"}, r"cluster\.labels\.Team: a GCP label key"),
    ({"cost-center": "ML Platform"}, r"cluster\.labels\.cost-center: 'ML Platform': a GCP label value"),
    ({"app.kubernetes.io/part-of": "x"}, r"cluster\.labels\.app\.kubernetes\.io/part-of: a GCP label key"),
])
def test_labels_gcp_refuses_are_config_errors(labels, path):
    raw = read_stack_file("prod").namespace_config
    raw["cluster"] = {**raw["cluster"], "labels": labels}
    with pytest.raises(ConfigError, match=path):
        run_stack(raw, stack="bad-labels")
