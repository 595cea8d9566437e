"""The GKE cluster network: a VPC-native subnet with Pod/Service ranges, and egress for private nodes.

Unless an existing subnetwork is given, the component builds a custom-mode VPC
and one regional subnet (``cidr`` for nodes, secondary ranges ``pods`` =
``pods_cidr`` and ``services`` = ``services_cidr``) with Private Google
Access. Private nodes have no public IP, yet must pull vLLM images and model
weights from the internet: for a network the component builds, a Cloud Router
with Cloud NAT gives them egress. A network you bring keeps its own egress.
"""

import ipaddress
import re
from typing import TYPE_CHECKING, NotRequired

import pulumi

from ...base import Issues
from ...network_base import DEFAULT_CIDR, ClusterNetwork, NetworkArgs, cidr_problem

if TYPE_CHECKING:
    import pulumi_gcp as gcp

PODS_RANGE = "pods"
SERVICES_RANGE = "services"
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
DEFAULT_PODS_CIDR = "10.4.0.0/14"
DEFAULT_SERVICES_CIDR = "10.8.0.0/20"


def region_of(location: str) -> str:
    """``us-central1`` for ``us-central1-c`` (a zonal cluster) or ``us-central1``."""
    match = _ZONE.match(location)
    return match.group(1) if match else location


class GkeNetworkArgs(NetworkArgs):
    """The network of one GKE cluster: ``cidr`` is the node subnet's range."""

    name: str
    """Base name of what is built: ``<name>-vpc``, ``<name>-nodes``, ``<name>-router``, ``<name>-nat``."""
    region: str
    """The region of the subnet and NAT (a zone such as ``us-central1-c`` is read as its region)."""
    project: NotRequired[pulumi.Input[str]]
    """The GCP project (default: the provider's project)."""
    pods_cidr: NotRequired[str]
    """The Pod range, a secondary range of the subnet (default ``10.4.0.0/14``)."""
    services_cidr: NotRequired[str]
    """The Service range, a secondary range of the subnet (default ``10.8.0.0/20``)."""
    existing_network: NotRequired[pulumi.Input[str]]
    """Use this VPC network instead of building one (with ``existing_subnetwork``)."""
    existing_subnetwork: NotRequired[pulumi.Input[str]]
    """Use this subnetwork instead of building one; GKE then creates the Pod and Service ranges."""
    private_nodes: NotRequired[bool]
    """Nodes without public IPs, so the built network gets Cloud NAT for egress (default true)."""


def network_issues(args: GkeNetworkArgs) -> Issues:
    """Problems with the address plan, in argument names."""
    issues: Issues = []
    ranges = {"cidr": args.get("cidr", DEFAULT_CIDR), "pods_cidr": args.get("pods_cidr", DEFAULT_PODS_CIDR),
              "services_cidr": args.get("services_cidr", DEFAULT_SERVICES_CIDR)}
    networks = {}
    for key, value in ranges.items():
        problem = cidr_problem(value)
        if problem:
            issues.append((key, problem))
        else:
            networks[key] = ipaddress.ip_network(value, strict=True)
    names = list(networks)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if networks[first].overlaps(networks[second]):
                issues.append((second, f"{ranges[second]} overlaps {first} ({ranges[first]}); node, Pod and "
                                       "Service ranges must be disjoint"))
    if args.get("existing_subnetwork") and not args.get("existing_network"):
        issues.append(("existing_subnetwork", "needs existing_network (the VPC the subnetwork belongs to)"))
    return issues


class GkeNetwork(ClusterNetwork):
    """VPC + subnet (or an existing pair) and, for private nodes, Cloud Router + NAT."""

    LEGACY_TYPE = "gpu-fungibility:gke_network:GkeNetwork"
    EXISTING_ARGUMENT = "existing_subnetwork"
    RULES = staticmethod(network_issues)

    network: pulumi.Output[str]
    """The VPC network's id (or the existing network)."""
    subnetwork: pulumi.Output[str]
    """The node subnetwork's id (or the existing subnetwork)."""
    pods_range_name: str | None
    """The subnet's secondary range for Pods; unset for an existing subnetwork."""
    services_range_name: str | None
    """The subnet's secondary range for Services; unset for an existing subnetwork."""

    def __init__(self, name: str, args: GkeNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def use_existing(self, args: GkeNetworkArgs) -> None:
        self.network = pulumi.Output.from_input(args.get("existing_network") or "")
        self.subnetwork = pulumi.Output.from_input(args["existing_subnetwork"])
        self.pods_range_name = self.services_range_name = None

    def build(self, name: str, args: GkeNetworkArgs) -> None:
        region = region_of(args["region"])
        vpc, subnet = self._vpc_and_subnet(name, args, region)
        self.network, self.subnetwork = vpc.id, subnet.id
        self.pods_range_name, self.services_range_name = PODS_RANGE, SERVICES_RANGE
        if args.get("private_nodes", True):
            self._nat(name, args, region, vpc, subnet)

    def _vpc_and_subnet(self, name: str, args: GkeNetworkArgs, region: str):
        import pulumi_gcp as gcp

        vpc = gcp.compute.Network(
            f"{name}-vpc",
            gcp.compute.NetworkArgs(
                name=f"{args['name']}-vpc",
                auto_create_subnetworks=False,
                routing_mode="REGIONAL",
                project=args.get("project"),
            ),
            opts=self.child(),
        )
        subnet = gcp.compute.Subnetwork(
            f"{name}-subnet",
            gcp.compute.SubnetworkArgs(
                name=f"{args['name']}-nodes",
                network=vpc.id,
                region=region,
                ip_cidr_range=args.get("cidr", DEFAULT_CIDR),
                private_ip_google_access=True,
                secondary_ip_ranges=[
                    gcp.compute.SubnetworkSecondaryIpRangeArgs(
                        range_name=PODS_RANGE, ip_cidr_range=args.get("pods_cidr", DEFAULT_PODS_CIDR)),
                    gcp.compute.SubnetworkSecondaryIpRangeArgs(
                        range_name=SERVICES_RANGE, ip_cidr_range=args.get("services_cidr", DEFAULT_SERVICES_CIDR)),
                ],
                project=args.get("project"),
            ),
            opts=self.child(),
        )
        return vpc, subnet

    def _nat(self, name: str, args: GkeNetworkArgs, region: str, vpc, subnet) -> "gcp.compute.RouterNat":
        import pulumi_gcp as gcp

        router = gcp.compute.Router(
            f"{name}-router",
            gcp.compute.RouterArgs(name=f"{args['name']}-router", network=vpc.id, region=region,
                                   project=args.get("project")),
            opts=self.child(),
        )
        return gcp.compute.RouterNat(
            f"{name}-nat",
            gcp.compute.RouterNatArgs(
                name=f"{args['name']}-nat",
                router=router.name,
                region=region,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=subnet.id,
                                                                 source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                project=args.get("project"),
            ),
            opts=self.child(),
        )
