"""``control-plane-reachable`` (stack, mandatory): the Kubernetes provider can reach its cluster's API.

A Kubernetes provider built from a cluster of the stack (it depends on the
cluster) talks to one of the cluster's endpoints in the same run that creates
the network. The rule refuses a plan where nothing in the plan or the config
could reach that endpoint:

- GKE: the provider uses the DNS-based endpoint when the cluster allows user
  traffic on it (``controlPlaneEndpointsConfig.dnsEndpointConfig.allowExternalTraffic``:
  IAM-authorized, reachable from anywhere); otherwise the IP endpoint, the only
  one left. A public IP endpoint is reachable from its authorized networks
  (none configured: from anywhere). A private one
  (``privateClusterConfig.enablePrivateEndpoint``) is reachable only when an
  authorized network overlaps a subnetwork of the plan (``ipCidrRange``), is a
  declared runner range (``displayName`` starting ``runner-``, as
  ``controlPlane.runnerCidrs`` writes it), or overlaps a range of this policy's
  ``runnerCidrs`` config. IP access turned off with no DNS endpoint reaches
  nothing.
- EKS: an endpoint that is private only (``vpcConfig.endpointPublicAccess:
  false``) answers inside the VPC, and the cluster security group admits only
  itself; it is reachable when the plan opens 443 to a range
  (``aws:vpc/securityGroupIngressRule`` with ``cidrIpv4`` whose ports include
  443) that lies inside a VPC of the plan (``cidrBlock``) or is described as a
  runner (``pulumi up runner``, as ``controlPlane.runnerCidrs`` writes it), or
  that overlaps the ``runnerCidrs`` config.
- AKS: a private cluster (``apiServerAccessProfile.enablePrivateCluster``) has
  its API server on a private endpoint in the cluster's virtual network, with
  no public address (learn.microsoft.com/azure/aks/private-clusters); it is
  reachable when a range of this policy's ``runnerCidrs`` config lies in a
  virtual network or subnet of the plan (``addressSpace.addressPrefixes``,
  ``addressPrefix``), or, when the plan builds no network (an existing
  subnet), when ``runnerCidrs`` names any range. A public API server with
  ``authorizedIPRanges`` admits only those ranges
  (learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges); when the
  ``runnerCidrs`` config says where ``pulumi up`` runs, one of those ranges
  must overlap an authorized range. With no authorized ranges AKS's public API
  server admits every address.

The violation is reported on the provider, naming the cluster and the fix.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_policy import ReportViolation, StackValidationArgs

from ..stack_view import AKS_CLUSTER, EKS_CLUSTER, GKE_CLUSTER, UNKNOWN, dig, plain
from ..unknowns import Pending, dig_known, has_unknown
from .common import config_list

K8S_PROVIDER = "pulumi:providers:kubernetes"
GKE_SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
AWS_VPC = "aws:ec2/vpc:Vpc"
AWS_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
AZURE_VNET = "azure-native:network:VirtualNetwork"
AZURE_SUBNET = "azure-native:network:Subnet"
RUNNER_DISPLAY_PREFIX = "runner-"
RUNNER_DESCRIPTION_PREFIX = "pulumi up runner"
API_PORT = 443

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(values: Iterable[Any]) -> list[Network]:
    """The values that are CIDR blocks (unknown or malformed ones are skipped)."""
    found = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(str(value), strict=False))
        except ValueError:
            continue
    return found


def _overlaps(block: Network, others: Iterable[Network]) -> bool:
    return any(block.version == o.version and block.overlaps(o) for o in others)


def gke_unreachable(cluster: Mapping[str, Any], subnet_ranges: list[Network], runner_ranges: list[Network]) -> str | None:
    """Why no machine of the plan or the config can reach the endpoint a provider of this cluster uses."""
    endpoints = cluster.get("controlPlaneEndpointsConfig") or {}
    dns_traffic = dig(endpoints, "dnsEndpointConfig", "allowExternalTraffic")
    if dns_traffic is True or dns_traffic == UNKNOWN:
        return None
    if dig(endpoints, "ipEndpointsConfig", "enabled") is False:
        return ("its IP endpoint is turned off (ipEndpointsConfig.enabled: false) and its DNS-based endpoint "
                "admits no user traffic (dnsEndpointConfig.allowExternalTraffic is not true)")
    private = dig(cluster, "privateClusterConfig", "enablePrivateEndpoint")
    authorized_config = cluster.get("masterAuthorizedNetworksConfig")
    blocks = [b for b in dig(authorized_config, "cidrBlocks", default=[]) or [] if isinstance(b, Mapping)]
    if any(b.get("cidrBlock") == UNKNOWN for b in blocks) or private == UNKNOWN:
        return None
    if private is not True:
        if authorized_config is None or blocks or authorized_config.get("gcpPublicCidrsAccessEnabled") is True:
            return None
        return "its public IP endpoint has master authorized networks with no CIDR block, so it admits no one"
    if authorized_config is None:
        blocks = [{"cidrBlock": "0.0.0.0/0"}]
    declared = networks(b.get("cidrBlock") for b in blocks
                        if str(b.get("displayName") or "").startswith(RUNNER_DISPLAY_PREFIX))
    if declared:
        return None
    authorized = networks(b.get("cidrBlock") for b in blocks)
    if any(_overlaps(block, subnet_ranges) or _overlaps(block, runner_ranges) for block in authorized):
        return None
    listed = ", ".join(str(b) for b in authorized) or "none"
    return (f"its IP endpoint is private (enablePrivateEndpoint) and its authorized networks ({listed}) hold no "
            "subnetwork of the plan, no declared runner range and no range of this policy's runnerCidrs config, "
            "while its DNS-based endpoint admits no user traffic")


def eks_unreachable(cluster: Mapping[str, Any], vpc_ranges: list[Network], ingress_rules: list[Mapping[str, Any]],
                    runner_ranges: list[Network]) -> str | None:
    """Why no machine of the plan or the config can reach a private-only EKS endpoint (None: reachable)."""
    vpc = cluster.get("vpcConfig") or {}
    public = vpc.get("endpointPublicAccess")
    if public is not False:  # absent: AWS's default is a public endpoint
        return None
    opened = []
    for rule in ingress_rules:
        low, high = rule.get("fromPort"), rule.get("toPort")
        if rule.get("ipProtocol") not in ("tcp", "-1", -1) or UNKNOWN in (low, high):
            continue
        if rule.get("ipProtocol") == "tcp" and not (isinstance(low, int) and isinstance(high, int)
                                                    and low <= API_PORT <= high):
            continue
        for block in networks([rule.get("cidrIpv4")]):
            described = str(rule.get("description") or "").startswith(RUNNER_DESCRIPTION_PREFIX)
            inside = any(block.version == v.version and block.subnet_of(v) for v in vpc_ranges)
            if described or inside or _overlaps(block, runner_ranges):
                opened.append(block)
    if opened:
        return None
    return ("its endpoint is private only (endpointPublicAccess: false) and no runner inside the VPC is declared: "
            "no security group rule of the plan opens port 443 to a range in the VPC or to this policy's "
            "runnerCidrs config")


def aks_unreachable(cluster: Mapping[str, Any], vnet_ranges: list[Network] | None,
                    runner_ranges: list[Network]) -> str | None:
    """Why no runner can reach this AKS API server (None: reachable). ``vnet_ranges`` None: the plan builds
    no virtual network (the cluster uses an existing subnet), so where the endpoint sits is not in the plan."""
    access = cluster.get("apiServerAccessProfile") or {}
    private = access.get("enablePrivateCluster")
    authorized = access.get("authorizedIPRanges") or []
    if private == UNKNOWN or authorized == UNKNOWN or UNKNOWN in authorized:
        return None
    if private is True:
        if vnet_ranges is None and runner_ranges:
            return None
        if vnet_ranges and any(_overlaps(r, vnet_ranges) for r in runner_ranges):
            return None
        where = ", ".join(str(r) for r in vnet_ranges or []) or "an existing subnet"
        return (f"its API server is private (apiServerAccessProfile.enablePrivateCluster) and answers only inside "
                f"its virtual network ({where}), and this policy's runnerCidrs config names no range there")
    if not authorized or not runner_ranges:
        return None  # open to all, or the allow-list is where the operator runs
    if any(_overlaps(r, networks(authorized)) for r in runner_ranges):
        return None
    return (f"its public API server admits only its authorized IP ranges ({', '.join(map(str, authorized))}), "
            f"and none of them holds a range of this policy's runnerCidrs config "
            f"({', '.join(str(r) for r in runner_ranges)})")


#: The settings each cluster type's verdict is decided on: while one is unknown, the cluster is not judged.
_DECIDING: dict[str, tuple[tuple[str, ...], ...]] = {
    GKE_CLUSTER: (("controlPlaneEndpointsConfig", "dnsEndpointConfig", "allowExternalTraffic"),
                  ("controlPlaneEndpointsConfig", "ipEndpointsConfig", "enabled"),
                  ("privateClusterConfig", "enablePrivateEndpoint"), ("masterAuthorizedNetworksConfig",)),
    EKS_CLUSTER: (("vpcConfig", "endpointPublicAccess"),),
    AKS_CLUSTER: (("apiServerAccessProfile", "enablePrivateCluster"), ("apiServerAccessProfile", "authorizedIPRanges")),
}


def validate_control_plane_reachable(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    runner_ranges = networks(config_list(args.get_config(), "runnerCidrs"))
    of_type = {t: [r for r in resources if r.resource_type == t]
               for t in (GKE_SUBNETWORK, AWS_VPC, AWS_INGRESS_RULE, AZURE_VNET, AZURE_SUBNET)}
    subnet_ranges = networks(plain(r.props).get("ipCidrRange") for r in of_type[GKE_SUBNETWORK])
    vpc_ranges = networks(plain(r.props).get("cidrBlock") for r in of_type[AWS_VPC])
    ingress = [plain(r.props) for r in of_type[AWS_INGRESS_RULE]]
    vnets = of_type[AZURE_VNET] + of_type[AZURE_SUBNET]
    vnet_ranges = networks([*(p for r in of_type[AZURE_VNET]
                              for p in dig(plain(r.props), "addressSpace", "addressPrefixes", default=[]) or []),
                            *(plain(r.props).get("addressPrefix") for r in of_type[AZURE_SUBNET])]) if vnets else None
    clusters = {r.urn: r for r in resources if r.resource_type in (GKE_CLUSTER, EKS_CLUSTER, AKS_CLUSTER)}
    pending = Pending()
    for provider in (r for r in resources if r.resource_type == K8S_PROVIDER):
        for dependency in provider.dependencies or []:
            cluster = clusters.get(getattr(dependency, "urn", None))
            if cluster is None:
                continue
            props = plain(cluster.props)
            unknown = [".".join(path) for path in _DECIDING[cluster.resource_type]
                       if not dig_known(props, *path)[0] or has_unknown(dig(props, *path))]
            if cluster.resource_type == EKS_CLUSTER and any(
                    has_unknown([r.get("cidrIpv4"), r.get("fromPort"), r.get("toPort"), r.get("ipProtocol")])
                    for r in ingress):
                unknown.append("the ranges and ports of its security group rules")
            if unknown:
                pending.add(", ".join(unknown), f"cluster {cluster.name} ({cluster.urn})")
                continue
            if cluster.resource_type == GKE_CLUSTER:
                problem = gke_unreachable(props, subnet_ranges, runner_ranges)
                fix = ("Keep controlPlane.dnsEndpoint true (the IAM-authorized DNS endpoint), make the IP endpoint "
                       "public with authorizedNetworks, or list where `pulumi up` runs in controlPlane.runnerCidrs.")
            elif cluster.resource_type == EKS_CLUSTER:
                problem = eks_unreachable(props, vpc_ranges, ingress, runner_ranges)
                fix = ("Set controlPlane.publicEndpoint with authorizedNetworks, or list the ranges in the VPC that "
                       "`pulumi up` runs from in controlPlane.runnerCidrs.")
            else:
                problem = aks_unreachable(props, vnet_ranges, runner_ranges)
                fix = ("Set controlPlane.publicEndpoint with authorizedNetworks that hold where `pulumi up` runs, or "
                       "run it inside the cluster's virtual network and list that range in this policy's "
                       "runnerCidrs config.")
            if problem:
                report_violation(
                    f"Kubernetes provider {provider.name} talks to cluster {props.get('name') or cluster.name}, but "
                    f"{problem}: `pulumi up` could create the cluster and then apply none of its Kubernetes "
                    f"resources. {fix}",
                    provider.urn,
                )
    pending.finish()
