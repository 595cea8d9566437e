"""The EKS network: a VPC with private node subnets across the cluster's zones.

Nodes live in private subnets and reach the internet (image registries, the
EKS API) through NAT in small public subnets. Subnets carry the tags EKS and
the AWS load balancer integrations look for: ``kubernetes.io/cluster/<name>``
on all of them, ``kubernetes.io/role/internal-elb`` on private ones and
``kubernetes.io/role/elb`` on public ones. With ``existingSubnetIds`` nothing
is built and the given subnets are used as they are.
"""

import ipaddress
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired

import pulumi

from ...base import Issues, LibraryComponent
from ...network_base import DEFAULT_CIDR, ClusterNetwork, NetworkArgs, range_issues

if TYPE_CHECKING:
    import pulumi_aws as aws

INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"


def cluster_tag(cluster_name: str) -> str:
    return f"kubernetes.io/cluster/{cluster_name}"


@dataclass(frozen=True)
class SubnetPlan:
    zone: str
    private_cidr: str
    public_cidr: str


def plan_subnets(cidr: str, zones: list[str]) -> list[SubnetPlan]:
    """Split the VPC range into one large private and one small public subnet per zone.

    The range is cut into ``2**k`` equal blocks (``k`` the smallest with more
    blocks than zones); each zone gets one block for nodes and pods (the VPC
    CNI gives pods VPC addresses, so private subnets must be large) and the
    last block is shared out as the public subnets, which only hold NAT
    gateways and load balancers.
    """
    if not zones:
        raise ValueError("at least one zone is needed")
    network = ipaddress.ip_network(cidr, strict=True)
    bits = max(1, math.ceil(math.log2(len(zones) + 1)))
    blocks = list(network.subnets(prefixlen_diff=bits))
    public_bits = max(1, math.ceil(math.log2(len(zones))))
    public_blocks = list(blocks[-1].subnets(prefixlen_diff=public_bits))
    return [
        SubnetPlan(zone, str(blocks[i]), str(public_blocks[i]))
        for i, zone in enumerate(zones)
    ]


class EksNetworkArgs(NetworkArgs):
    """The network of one EKS cluster: a VPC of range ``cidr``."""

    cluster_name: str
    """The cluster's name: subnets are tagged ``kubernetes.io/cluster/<name>`` and resources named after it."""
    zones: list[str]
    """Availability zones: one private and one public subnet each (EKS needs two or more)."""
    existing_subnet_ids: NotRequired[list[str]]
    """Use these subnets (in two or more zones) instead of building a VPC."""
    nat_gateway_per_zone: NotRequired[bool]
    """One NAT gateway per zone instead of one shared (default false: cheaper, but egress depends on one zone)."""
    tags: NotRequired[dict[str, str]]
    """AWS tags on everything built."""


def eks_network_issues(args: EksNetworkArgs) -> Issues:
    issues = range_issues(args)
    if not args.get("existing_subnet_ids") and not args.get("zones"):
        issues.append(("zones", "list the availability zones to build subnets in"))
    return issues


class EksNetwork(ClusterNetwork):
    """A VPC with tagged private/public subnets and NAT egress, or a pass-through of existing subnets."""

    LEGACY_TYPE = "gpu-fungibility:eks_network:EksNetwork"
    EXISTING_ARGUMENT = "existing_subnet_ids"
    RULES = staticmethod(eks_network_issues)

    vpc_id: pulumi.Output[str] | None
    """The VPC's id (unset for existing subnets)."""
    private_subnet_ids: pulumi.Output[list[str]]
    """The private subnets, for the control plane and node groups."""
    public_subnet_ids: pulumi.Output[list[str]]
    """The public subnets (NAT gateways and internet-facing load balancers only)."""
    private_subnet_by_zone: dict[str, pulumi.Output[str]]
    """Zone -> private subnet id, to narrow a node group to some zones (empty for existing subnets)."""

    def __init__(self, name: str, args: EksNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def use_existing(self, args: EksNetworkArgs) -> None:
        self.vpc_id = None
        self.private_subnet_ids = pulumi.Output.from_input(list(args["existing_subnet_ids"]))
        self.public_subnet_ids = pulumi.Output.from_input([])
        self.private_subnet_by_zone = {}

    def build(self, name: str, args: EksNetworkArgs) -> None:
        built = _build_vpc(name, args, self)
        self.vpc_id = built.vpc.id
        self.private_subnet_by_zone = {z: s.id for z, s in built.private.items()}
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in built.private.values()])
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in built.public.values()])


@dataclass
class _BuiltVpc:
    vpc: "aws.ec2.Vpc"
    private: "dict[str, aws.ec2.Subnet]"
    public: "dict[str, aws.ec2.Subnet]"


def _build_vpc(name: str, args: EksNetworkArgs, parent: LibraryComponent) -> _BuiltVpc:
    import pulumi_aws as aws

    child = parent.child()
    cluster_name, cidr = args["cluster_name"], args.get("cidr", DEFAULT_CIDR)
    shared = {cluster_tag(cluster_name): "shared"}

    def tags(role: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**(args.get("tags") or {}), "Name": f"{cluster_name}-{role}", **(extra or {})}

    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=cidr,
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags=tags("vpc"),
        opts=child,
    )
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tags("igw"), opts=child)
    public_rt = aws.ec2.RouteTable(
        f"{name}-public-rt",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
        tags=tags("public"),
        opts=child,
    )
    def subnet(role: str, zone: str, cidr_block: str, load_balancer_tag: str) -> "aws.ec2.Subnet":
        return aws.ec2.Subnet(
            f"{name}-{role}-{zone}",
            vpc_id=vpc.id,
            availability_zone=zone,
            cidr_block=cidr_block,
            map_public_ip_on_launch=False,
            tags=tags(f"{role}-{zone}", {**shared, load_balancer_tag: "1"}),
            opts=child,
        )

    private: dict[str, aws.ec2.Subnet] = {}
    public: dict[str, aws.ec2.Subnet] = {}
    nat_by_zone: dict[str, aws.ec2.NatGateway] = {}
    for plan in plan_subnets(cidr, list(args["zones"])):
        public[plan.zone] = subnet("public", plan.zone, plan.public_cidr, PUBLIC_ELB_TAG)
        aws.ec2.RouteTableAssociation(
            f"{name}-public-{plan.zone}", subnet_id=public[plan.zone].id, route_table_id=public_rt.id, opts=child
        )
        private[plan.zone] = subnet("private", plan.zone, plan.private_cidr, INTERNAL_ELB_TAG)
        if args.get("nat_gateway_per_zone", False) or not nat_by_zone:
            eip = aws.ec2.Eip(f"{name}-nat-{plan.zone}", domain="vpc", tags=tags(f"nat-{plan.zone}"), opts=child)
            nat_by_zone[plan.zone] = aws.ec2.NatGateway(
                f"{name}-nat-{plan.zone}",
                allocation_id=eip.id,
                subnet_id=public[plan.zone].id,
                tags=tags(f"nat-{plan.zone}"),
                opts=parent.child(depends_on=[igw]),
            )
    first_nat = next(iter(nat_by_zone.values()))
    for zone, subnet in private.items():
        nat = nat_by_zone.get(zone, first_nat)
        rt = aws.ec2.RouteTable(
            f"{name}-private-{zone}",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
            tags=tags(f"private-{zone}"),
            opts=child,
        )
        aws.ec2.RouteTableAssociation(f"{name}-private-{zone}", subnet_id=subnet.id, route_table_id=rt.id, opts=child)
    return _BuiltVpc(vpc, private, public)
