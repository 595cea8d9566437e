"""The GKE cluster network: a VPC-native subnet with Pod/Service ranges, and egress for private nodes.

Unless ``cluster.network.existingSubnetwork`` is set, the stack builds a
custom-mode VPC and one regional subnet (``cidr`` for nodes, secondary ranges
``pods`` = ``podsCidr`` and ``services`` = ``servicesCidr``) with Private Google
Access. Private nodes have no public IP, yet must pull vLLM images and model
weights from the internet: for a network the stack builds, a Cloud Router with
Cloud NAT gives them egress. A network you bring keeps its own egress.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from stacks.config import ClusterConfig

PODS_RANGE = "pods"
SERVICES_RANGE = "services"
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")


def region_of(location: str) -> str:
    """``us-central1`` for ``us-central1-c`` (a zonal cluster) or ``us-central1``."""
    match = _ZONE.match(location)
    return match.group(1) if match else location


def network_issues(cluster: ClusterConfig) -> list[tuple[str, str]]:
    """Problems with the GKE address plan, each with its key path."""
    net = cluster.network
    ranges = {"cidr": net.cidr, "podsCidr": net.pods_cidr, "servicesCidr": net.services_cidr}
    issues = []
    names = list(ranges)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if ipaddress.ip_network(ranges[first]).overlaps(ipaddress.ip_network(ranges[second])):
                issues.append((
                    f"cluster.network.{second}",
                    f"{ranges[second]} overlaps {first} ({ranges[first]}); node, Pod and Service ranges must be disjoint",
                ))
    if net.existing_subnet_ids:
        issues.append(("cluster.network.existingSubnetIds", "is for EKS; on GKE set existingNetwork and existingSubnetwork"))
    return issues


@dataclass(frozen=True)
class GkeNetworkArgs:
    cluster: ClusterConfig
    project: pulumi.Input[str] | None = None


class GkeNetwork(pulumi.ComponentResource):
    """VPC + subnet (or an existing pair) and, for private nodes, Cloud Router + NAT.

    ``pods_range_name``/``services_range_name`` are set when the stack built the
    subnet; for an existing subnetwork they are None and GKE creates the
    secondary ranges from ``podsCidr``/``servicesCidr``.
    """

    network: pulumi.Output[str]
    subnetwork: pulumi.Output[str]
    pods_range_name: str | None
    services_range_name: str | None
    nat: gcp.compute.RouterNat | None

    def __init__(self, name: str, args: GkeNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:gke_network:GkeNetwork", name, None, opts)
        issues = network_issues(args.cluster)
        if issues:
            from stacks.loader import ConfigError

            raise ConfigError(issues)
        net = args.cluster.network
        region = region_of(args.cluster.location)
        self.nat = None
        if net.existing_subnetwork:
            self.network = pulumi.Output.from_input(net.existing_network or "")
            self.subnetwork = pulumi.Output.from_input(net.existing_subnetwork)
            self.pods_range_name = self.services_range_name = None
        else:
            vpc, subnet = _vpc_and_subnet(self, name, args, region)
            self.network, self.subnetwork = vpc.id, subnet.id
            self.pods_range_name, self.services_range_name = PODS_RANGE, SERVICES_RANGE
            if args.cluster.private_nodes:
                self.nat = _nat(self, name, args, region, vpc, subnet)
        self.register_outputs({"network": self.network, "subnetwork": self.subnetwork})


def _vpc_and_subnet(parent: pulumi.Resource, name: str, args: GkeNetworkArgs, region: str):
    net = args.cluster.network
    child = pulumi.ResourceOptions(parent=parent)
    vpc = gcp.compute.Network(
        f"{name}-vpc",
        gcp.compute.NetworkArgs(
            name=f"{args.cluster.name}-vpc",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            project=args.project,
        ),
        opts=child,
    )
    subnet = gcp.compute.Subnetwork(
        f"{name}-subnet",
        gcp.compute.SubnetworkArgs(
            name=f"{args.cluster.name}-nodes",
            network=vpc.id,
            region=region,
            ip_cidr_range=net.cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=net.pods_cidr),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=net.services_cidr),
            ],
            project=args.project,
        ),
        opts=child,
    )
    return vpc, subnet


def _nat(parent, name, args: GkeNetworkArgs, region: str, vpc, subnet) -> gcp.compute.RouterNat:
    child = pulumi.ResourceOptions(parent=parent)
    router = gcp.compute.Router(
        f"{name}-router",
        gcp.compute.RouterArgs(name=f"{args.cluster.name}-router", network=vpc.id, region=region,
                               project=args.project),
        opts=child,
    )
    return gcp.compute.RouterNat(
        f"{name}-nat",
        gcp.compute.RouterNatArgs(
            name=f"{args.cluster.name}-nat",
            router=router.name,
            region=region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
            project=args.project,
        ),
        opts=child,
    )
