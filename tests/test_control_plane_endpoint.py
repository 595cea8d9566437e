"""Which control-plane endpoint `pulumi up` uses: GkeCluster under mocks, and the config that chooses it."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
from gpu_fungibility.clouds.gke.cluster import GkeCluster, cluster_issues, kubeconfig

from offline_plan.run import run_stack, run_stack_file
from stacks.loader import ConfigError, parse_stack_config

DNS_NAME = "gke-0123456789abcdef0123456789abcdef-123456789012.us-central1.gke.goog"
CA = "Q0EK"


class ClusterMocks(pulumi.runtime.Mocks):
    """Echo inputs; the cluster gets an IP endpoint, a DNS endpoint and a CA. Keeps what each resource got."""

    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.inputs[args.name] = args.inputs
        outputs = dict(args.inputs)
        if args.typ == "gcp:container/cluster:Cluster":
            dns = {**(args.inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig", {}),
                   "endpoint": DNS_NAME}
            outputs |= {"endpoint": "10.20.0.2", "masterAuth": {"clusterCaCertificate": CA},
                        "controlPlaneEndpointsConfig": {"dnsEndpointConfig": dns}}
        if args.typ == "gcp:serviceaccount/account:Account":
            outputs["email"] = f"{args.inputs['accountId']}@p.iam.gserviceaccount.com"
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


ARGS = {"name": "c", "location": "us-central1", "zones": ["us-central1-c"], "project": "p",
        "network": "net", "subnetwork": "subnet"}


def build(mocks: ClusterMocks, **extra: Any) -> GkeCluster:
    pulumi.runtime.set_mocks(mocks, project="gpu-fungibility", stack="endpoint", preview=False)
    return GkeCluster("gke", {**ARGS, **extra})


@pulumi.runtime.test
def test_the_provider_and_kubeconfig_use_the_dns_endpoint_without_a_ca():
    mocks = ClusterMocks()
    cluster = build(mocks)

    def check(values):
        config, _ = values
        doc = json.loads(config)
        assert doc["clusters"][0]["cluster"] == {"server": f"https://{DNS_NAME}"}, "publicly trusted: no CA"
        assert doc["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
        endpoints = mocks.inputs["gke-cluster"]["controlPlaneEndpointsConfig"]
        assert endpoints == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
        assert mocks.inputs["gke-cluster"]["privateClusterConfig"]["enablePrivateEndpoint"] is True, "IP stays private"
        provider = mocks.inputs["gke-k8s"]
        secret = provider["kubeconfig"]  # the secret's wire form: {<signature>: <secret sig>, "value": ...}
        assert isinstance(secret, dict) and json.loads(secret["value"]) == doc, "the provider gets it, as a secret"
        assert provider["clusterIdentifier"] == "projects/p/locations/us-central1/clusters/c"

    return pulumi.Output.all(cluster.kubeconfig, cluster.kubernetes_provider.urn).apply(check)


@pulumi.runtime.test
def test_the_ip_endpoint_with_runner_ranges_authorizes_them_and_keeps_the_ca():
    mocks = ClusterMocks()
    cluster = build(mocks, dns_endpoint=False, authorized_networks=["10.30.0.0/24"], runner_cidrs=["10.20.8.0/24"])

    def check(values):
        config, _ = values
        assert json.loads(config)["clusters"][0]["cluster"] == {"server": "https://10.20.0.2",
                                                                 "certificate-authority-data": CA}
        inputs = mocks.inputs["gke-cluster"]
        # off is said: an omitted block would leave a cluster's DNS endpoint admitting traffic
        assert inputs["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": False}}
        assert inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
            {"cidrBlock": "10.30.0.0/24", "displayName": "authorized-0"},
            {"cidrBlock": "10.20.8.0/24", "displayName": "runner-0"}]
        assert mocks.inputs["gke-k8s"]["clusterIdentifier"] == "projects/p/locations/us-central1/clusters/c"

    return pulumi.Output.all(cluster.kubeconfig, cluster.kubernetes_provider.urn).apply(check)


def test_a_private_ip_endpoint_without_runner_ranges_is_refused_by_the_component():
    private_ip = {**ARGS, "dns_endpoint": False}
    assert [path for path, _ in cluster_issues(private_ip)] == ["runner_cidrs"]
    assert cluster_issues({**private_ip, "runner_cidrs": ["10.20.8.0/24"]}) == []
    assert cluster_issues({**private_ip, "public_endpoint": True, "authorized_networks": ["203.0.113.0/24"]}) == []
    assert cluster_issues(ARGS) == [], "the DNS endpoint needs no runner"
    assert [p for p, _ in cluster_issues({**private_ip, "runner_cidrs": ["10.20.8.1/24"]})] == ["runner_cidrs[0]"]


def test_the_kubeconfig_helper_drops_the_ca_only_for_the_dns_endpoint():
    assert json.loads(kubeconfig("c", DNS_NAME, None))["clusters"][0]["cluster"] == {"server": f"https://{DNS_NAME}"}
    assert "certificate-authority-data" in json.loads(kubeconfig("c", "10.0.0.2", CA))["clusters"][0]["cluster"]


# ---- the stack config -----------------------------------------------------------------------------------


def gke(**control_plane: Any) -> dict:
    return {"cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-c"],
                        "controlPlane": control_plane},
            "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}}}


def eks(**control_plane: Any) -> dict:
    return {"cluster": {"cloud": "eks", "name": "c", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2b"],
                        "controlPlane": control_plane},
            "nodePools": {"l4": {"instanceTypes": ["g6.xlarge"], "accelerator": {"type": "nvidia-l4"}}}}


def problems(raw: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack(raw, stack="endpoint")
    return str(caught.value)


def test_the_dns_endpoint_is_the_default():
    assert parse_stack_config(gke(), checks=False).cluster.control_plane.dns_endpoint is True
    cluster = run_stack(gke(), stack="endpoint").named("gke-cluster")
    assert cluster.inputs["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}


@pytest.mark.parametrize("raw, path, words", [
    (gke(dnsEndpoint=False), "cluster.controlPlane.runnerCidrs", "private IP endpoint"),
    (gke(dnsEndpoint=False, runnerCidrs=["10.0.0.1/24"]), "cluster.controlPlane.runnerCidrs", "not a CIDR block"),
    (eks(dnsEndpoint=True, runnerCidrs=["10.0.9.0/24"]), "cluster.controlPlane.dnsEndpoint", "is for GKE"),
], ids=["gke-private-ip", "gke-bad-cidr", "eks-dns"])
def test_an_unreachable_endpoint_is_refused_with_its_key_path(raw, path, words):
    text = problems(raw)
    assert f"{path}:" in text and words in text, text


def test_a_private_only_eks_endpoint_without_runners_is_warned_about():
    run = run_stack(eks(), stack="endpoint")
    warnings = [d.message for d in run.diagnostics if d.severity == "warning"]
    assert any("private only" in w and "cluster.controlPlane.runnerCidrs" in w for w in warnings), warnings
    assert not run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")


def test_runner_ranges_make_the_ip_endpoint_usable():
    run = run_stack(gke(dnsEndpoint=False, runnerCidrs=["10.0.8.0/24"]), stack="endpoint")
    blocks = run.named("gke-cluster").inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]
    assert blocks == [{"cidrBlock": "10.0.8.0/24", "displayName": "runner-0"}]
    eks_run = run_stack(eks(runnerCidrs=["10.0.9.0/24"]), stack="endpoint")
    (rule,) = eks_run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert (rule.inputs["cidrIpv4"], rule.inputs["fromPort"]) == ("10.0.9.0/24", 443), rule.urn


def test_an_eks_runner_in_a_connected_network_gets_its_rule():
    # a peered VPC, Transit Gateway or VPN range outside the cluster VPC reaches a private-only endpoint
    run = run_stack(eks(runnerCidrs=["192.168.0.0/24"]), stack="endpoint")
    (rule,) = run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert (rule.inputs["cidrIpv4"], rule.inputs["fromPort"], rule.inputs["toPort"]) == ("192.168.0.0/24", 443, 443)
    assert rule.inputs["description"].startswith("pulumi up runner"), rule.urn


def test_prod_reaches_its_private_cluster_through_the_dns_endpoint():
    run = run_stack_file("prod")
    cluster = run.named("gke-cluster")
    assert cluster.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True, cluster.urn
    assert cluster.inputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] is True
    assert run.named("gke-k8s").inputs["kubeconfig"] == "[secret]"
