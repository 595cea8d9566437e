"""``control-plane-reachable`` with hand-built stacks: a provider, its cluster, the plan's networks."""

from __future__ import annotations

from typing import Any

import pytest

from policies.rules.endpoint import validate_control_plane_reachable
from policies.unknowns import NotJudged
from tests.policy_fixtures import R, run_stack_rule

GKE_CLUSTER = "gcp:container/cluster:Cluster"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
PROVIDER = "pulumi:providers:kubernetes"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"


def gke_cluster(*, private: bool = True, blocks: list[dict] | None = None, dns: bool | None = None,
                ip_enabled: bool | None = None) -> R:
    props: dict[str, Any] = {
        "name": "prod",
        "privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": private},
        "masterAuthorizedNetworksConfig": {"cidrBlocks": blocks if blocks is not None else [],
                                           "gcpPublicCidrsAccessEnabled": False},
    }
    endpoints: dict[str, Any] = {}
    if dns is not None:
        endpoints["dnsEndpointConfig"] = {"allowExternalTraffic": dns}
    if ip_enabled is not None:
        endpoints["ipEndpointsConfig"] = {"enabled": ip_enabled}
    if endpoints:
        props["controlPlaneEndpointsConfig"] = endpoints
    return R(GKE_CLUSTER, "gke-cluster", props)


def provider_of(cluster: R) -> R:
    return R(PROVIDER, "gke-k8s", {"kubeconfig": "[secret]"}, dependencies=[cluster.urn])


def subnet(cidr: str = "10.20.0.0/20") -> R:
    return R(SUBNETWORK, "network-subnet", {"ipCidrRange": cidr})


def block(cidr: str, name: str = "authorized-0") -> dict:
    return {"cidrBlock": cidr, "displayName": name}


def check(resources: list[R], config: dict | None = None) -> list[tuple[str, str | None]]:
    return run_stack_rule(validate_control_plane_reachable, resources, config).violations


# ---- GKE ---------------------------------------------------------------------------------------------


def test_the_private_ip_endpoint_nothing_in_the_plan_reaches_is_refused():
    cluster = gke_cluster(blocks=[block("10.30.0.0/24")])
    provider = provider_of(cluster)
    ((message, urn),) = check([subnet(), cluster, provider])
    assert urn == provider.urn
    assert "gke-k8s" in message and "cluster prod" in message
    assert "10.30.0.0/24" in message and "private" in message
    assert "controlPlane.dnsEndpoint" in message and "controlPlane.runnerCidrs" in message


def test_the_dns_endpoint_is_reachable_whatever_the_ip_endpoint():
    cluster = gke_cluster(blocks=[block("10.30.0.0/24")], dns=True)
    assert check([subnet(), cluster, provider_of(cluster)]) == []
    # the DNS endpoint present but closed to user traffic does not help
    closed = gke_cluster(blocks=[block("10.30.0.0/24")], dns=False)
    assert len(check([subnet(), closed, provider_of(closed)])) == 1


@pytest.mark.parametrize("authorized, reachable", [
    ("10.20.4.0/24", True),     # inside the plan's subnetwork: a runner there is authorized
    ("10.0.0.0/8", True),       # holds the subnetwork
    ("10.30.0.0/24", False),    # beside it
    ("192.168.0.0/16", False),
])
def test_a_private_ip_endpoint_needs_an_authorized_network_over_a_plan_subnetwork(authorized, reachable):
    cluster = gke_cluster(blocks=[block(authorized)])
    assert (check([subnet(), cluster, provider_of(cluster)]) == []) is reachable


def test_a_declared_runner_range_or_the_policy_config_reaches_it():
    runner = gke_cluster(blocks=[block("10.30.0.0/24"), block("172.16.5.0/24", "runner-0")])
    assert check([runner, provider_of(runner)]) == [], "controlPlane.runnerCidrs writes runner-<i>"
    plain = gke_cluster(blocks=[block("10.30.0.0/24")])
    assert check([plain, provider_of(plain)], {"runnerCidrs": ["10.30.0.16/28"]}) == []
    assert len(check([plain, provider_of(plain)], {"runnerCidrs": ["10.31.0.0/28"]})) == 1


def test_a_public_ip_endpoint_is_reachable_from_its_allow_list_and_never_from_an_empty_one():
    listed = gke_cluster(private=False, blocks=[block("203.0.113.0/24")])
    assert check([listed, provider_of(listed)]) == []
    empty = gke_cluster(private=False, blocks=[])
    ((message, _),) = check([empty, provider_of(empty)])
    assert "admits no one" in message


def test_ip_access_off_without_the_dns_endpoint_reaches_nothing():
    cluster = gke_cluster(private=False, blocks=[block("203.0.113.0/24")], ip_enabled=False)
    ((message, _),) = check([cluster, provider_of(cluster)])
    assert "ipEndpointsConfig.enabled: false" in message


def test_only_providers_built_from_the_cluster_are_judged():
    cluster = gke_cluster(blocks=[block("10.30.0.0/24")])
    other = R(PROVIDER, "elsewhere", {"kubeconfig": "[secret]"})
    assert check([cluster, other]) == []


def test_values_unknown_in_a_preview_are_not_judged():
    cluster = gke_cluster(blocks=[block("[unknown]")])
    with pytest.raises(NotJudged, match="masterAuthorizedNetworksConfig of cluster"):  # advisory, no violation
        check([cluster, provider_of(cluster)])


# ---- EKS ---------------------------------------------------------------------------------------------


def eks_cluster(*, public: bool) -> R:
    return R(EKS_CLUSTER, "demo-eks", {"name": "demo", "vpcConfig": {
        "endpointPrivateAccess": True, "endpointPublicAccess": public, "subnetIds": ["subnet-a", "subnet-b"]}})


def vpc(cidr: str = "10.0.0.0/16") -> R:
    return R("aws:ec2/vpc:Vpc", "demo-vpc", {"cidrBlock": cidr})


def ingress(cidr: str, *, port: int = 443, description: str = "") -> R:
    return R("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f"rule-{cidr}-{port}", {
        "cidrIpv4": cidr, "ipProtocol": "tcp", "fromPort": port, "toPort": port, "description": description,
        "securityGroupId": "sg-1"})


def test_a_private_only_eks_endpoint_needs_a_runner_inside_the_vpc():
    cluster = eks_cluster(public=False)
    provider = provider_of(cluster)
    ((message, urn),) = check([vpc(), cluster, provider])
    assert urn == provider.urn and "endpointPublicAccess: false" in message and "runnerCidrs" in message
    assert check([vpc(), ingress("10.0.250.0/24"), cluster, provider]) == []
    assert len(check([vpc(), ingress("10.0.250.0/24", port=22), cluster, provider])) == 1, "443 must be open"
    assert len(check([vpc(), ingress("198.51.100.0/24"), cluster, provider])) == 1, "outside the VPC"
    described = ingress("100.64.0.0/24", description="pulumi up runner: Kubernetes API")
    assert check([described, cluster, provider]) == [], "an existing VPC: the declared runner rule"
    assert check([ingress("100.64.0.0/24"), cluster, provider], {"runnerCidrs": ["100.64.0.0/24"]}) == []


def test_a_public_eks_endpoint_is_reachable():
    cluster = eks_cluster(public=True)
    assert check([vpc(), cluster, provider_of(cluster)]) == []


# ---- AKS ---------------------------------------------------------------------------------------------


def aks_cluster(*, private: bool, authorized: list[str] | None = None) -> R:
    access: dict[str, Any] = {"enablePrivateCluster": private}
    if authorized is not None:
        access["authorizedIPRanges"] = authorized
    return R("azure-native:containerservice:ManagedCluster", "demo-aks", {
        "resourceName": "demo", "apiServerAccessProfile": access})


def vnet(cidr: str = "10.0.0.0/16") -> list[R]:
    return [R("azure-native:network:VirtualNetwork", "demo-vnet", {"addressSpace": {"addressPrefixes": [cidr]}}),
            R("azure-native:network:Subnet", "demo-nodes", {"addressPrefix": "10.0.0.0/20"})]


def test_a_private_aks_api_server_needs_a_runner_range_in_its_virtual_network():
    cluster = aks_cluster(private=True)
    provider = provider_of(cluster)
    ((message, urn),) = check([*vnet(), cluster, provider])
    assert urn == provider.urn and "cluster demo-aks" in message
    assert "enablePrivateCluster" in message and "10.0.0.0/16" in message and "runnerCidrs" in message
    assert check([*vnet(), cluster, provider], {"runnerCidrs": ["10.0.240.0/24"]}) == []
    assert len(check([*vnet(), cluster, provider], {"runnerCidrs": ["192.168.0.0/24"]})) == 1, "outside the VNet"


def test_a_private_aks_cluster_on_an_existing_subnet_needs_runner_ranges():
    cluster = aks_cluster(private=True)
    assert len(check([cluster, provider_of(cluster)])) == 1
    assert check([cluster, provider_of(cluster)], {"runnerCidrs": ["172.16.0.0/24"]}) == []


def test_a_public_aks_api_server_admits_its_authorized_ranges():
    cluster = aks_cluster(private=False, authorized=["203.0.113.0/24"])
    assert check([*vnet(), cluster, provider_of(cluster)]) == [], "the allow-list is where the operator runs"
    assert check([*vnet(), cluster, provider_of(cluster)], {"runnerCidrs": ["203.0.113.8/29"]}) == []
    ((message, _),) = check([*vnet(), cluster, provider_of(cluster)], {"runnerCidrs": ["198.51.100.0/24"]})
    assert "authorized IP ranges (203.0.113.0/24)" in message and "198.51.100.0/24" in message
    open_to_all = aks_cluster(private=False)
    assert check([*vnet(), open_to_all, provider_of(open_to_all)], {"runnerCidrs": ["198.51.100.0/24"]}) == []


def test_unknown_aks_access_is_not_judged():
    cluster = aks_cluster(private="[unknown]")  # type: ignore[arg-type]
    with pytest.raises(NotJudged, match="apiServerAccessProfile.enablePrivateCluster of cluster"):
        check([*vnet(), cluster, provider_of(cluster)])
