"""The AKS network: a virtual network with one node subnet, or an existing subnet.

With Azure CNI Overlay (the cluster's network plugin) pods take addresses from a private overlay range,
not from the subnet, so the node subnet only needs an address per node
(learn.microsoft.com/azure/aks/azure-cni-overlay). With ``existing_subnet_id`` nothing is built.
Nodes get no public IPs; the cluster's load balancer carries their egress.
"""

import ipaddress
import re
from typing import NotRequired

import pulumi

from ...base import Issues
from ...network_base import DEFAULT_CIDR, ClusterNetwork, NetworkArgs, range_issues

#: /subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>
SUBNET_ID = re.compile(r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
                       r"virtualNetworks/[^/]+/subnets/[^/]+", re.IGNORECASE)


class AksNetworkArgs(NetworkArgs):
    """The network of one AKS cluster: a virtual network whose first half (of ``cidr``) is the node subnet."""

    cluster_name: str
    """The cluster's name: the virtual network and subnet are named after it."""
    resource_group_name: pulumi.Input[str]
    """The resource group to build in."""
    location: str
    """The Azure region."""
    existing_subnet_id: NotRequired[str]
    """Use this subnet's resource id instead of building a virtual network."""
    tags: NotRequired[dict[str, str]]
    """Azure tags on everything built."""


def aks_network_issues(args: AksNetworkArgs) -> Issues:
    issues: Issues = []
    existing = args.get("existing_subnet_id")
    if existing:
        if not SUBNET_ID.fullmatch(existing):
            issues.append(("existing_subnet_id", f"{existing!r} is not a subnet resource id such as /subscriptions/"
                                                 "<id>/resourceGroups/<rg>/providers/Microsoft.Network/"
                                                 "virtualNetworks/<vnet>/subnets/<subnet>"))
        return issues
    return range_issues(args)


def node_subnet_cidr(cidr: str) -> str:
    """The node subnet: the first half of the virtual network (the rest is left for other subnets)."""
    return str(next(ipaddress.ip_network(cidr, strict=True).subnets(prefixlen_diff=1)))


class AksNetwork(ClusterNetwork):
    """A virtual network with a node subnet, or a pass-through of an existing subnet."""

    EXISTING_ARGUMENT = "existing_subnet_id"
    RULES = staticmethod(aks_network_issues)

    vnet_id: pulumi.Output[str] | None
    """The virtual network's id (unset for an existing subnet)."""
    node_subnet_id: pulumi.Output[str]
    """The subnet the cluster's nodes live in."""

    def __init__(self, name: str, args: AksNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def use_existing(self, args: AksNetworkArgs) -> None:
        self.vnet_id = None
        self.node_subnet_id = pulumi.Output.from_input(str(args["existing_subnet_id"]))

    def build(self, name: str, args: AksNetworkArgs) -> None:
        import pulumi_azure_native as azure_native

        cidr = args.get("cidr", DEFAULT_CIDR)
        tags = dict(args.get("tags") or {})
        vnet = azure_native.network.VirtualNetwork(
            f"{name}-vnet",
            virtual_network_name=f"{args['cluster_name']}-vnet",
            resource_group_name=args["resource_group_name"],
            location=args["location"],
            address_space=azure_native.network.AddressSpaceArgs(address_prefixes=[cidr]),
            tags=tags,
            opts=self.child(ignore_changes=["subnets"]),
        )
        subnet = azure_native.network.Subnet(
            f"{name}-nodes",
            subnet_name=f"{args['cluster_name']}-nodes",
            resource_group_name=args["resource_group_name"],
            virtual_network_name=vnet.name,
            address_prefix=node_subnet_cidr(cidr),
            opts=self.child(),
        )
        self.vnet_id = vnet.id
        self.node_subnet_id = subnet.id
