"""GKE's answer to ``control-plane-reachable``: which endpoint a provider of a GKE cluster uses, and who reaches it.

The provider uses the DNS-based endpoint when the cluster allows user traffic
on it (``controlPlaneEndpointsConfig.dnsEndpointConfig.allowExternalTraffic``:
IAM-authorized, reachable from anywhere); otherwise the IP endpoint, the only
one left. A public IP endpoint is reachable from its authorized networks (none
configured: from anywhere). A private one
(``privateClusterConfig.enablePrivateEndpoint``) is reachable only when an
authorized network overlaps a subnetwork of the plan (``ipCidrRange``), is a
declared runner range (``displayName`` starting ``runner-``, as
``controlPlane.runnerCidrs`` writes it), or overlaps a range of this policy's
``runnerCidrs`` config. IP access turned off with no DNS endpoint reaches
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..stack_view import UNKNOWN, dig, plain
from .endpoint import Network, networks, overlaps

SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
RUNNER_DISPLAY_PREFIX = "runner-"
#: The settings a cluster's verdict is decided on.
ENDPOINT_SETTINGS = (("controlPlaneEndpointsConfig", "dnsEndpointConfig", "allowExternalTraffic"),
                     ("controlPlaneEndpointsConfig", "ipEndpointsConfig", "enabled"),
                     ("privateClusterConfig", "enablePrivateEndpoint"), ("masterAuthorizedNetworksConfig",))
ENDPOINT_FIX = ("Keep controlPlane.dnsEndpoint true (the IAM-authorized DNS endpoint), make the IP endpoint "
                "public with authorizedNetworks, or list where `pulumi up` runs in controlPlane.runnerCidrs.")


def reach_inputs(resources: Sequence[Any]) -> list[Network]:
    """The ranges of the plan's subnetworks."""
    return networks(plain(r.props).get("ipCidrRange") for r in resources if r.resource_type == SUBNETWORK)


def unknown_reach_inputs(subnet_ranges: list[Network]) -> list[str]:
    return []


def unreachable(cluster: Mapping[str, Any], subnet_ranges: list[Network], runner_ranges: list[Network]) -> str | None:
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
    if any(overlaps(block, subnet_ranges) or overlaps(block, runner_ranges) for block in authorized):
        return None
    listed = ", ".join(str(b) for b in authorized) or "none"
    return (f"its IP endpoint is private (enablePrivateEndpoint) and its authorized networks ({listed}) hold no "
            "subnetwork of the plan, no declared runner range and no range of this policy's runnerCidrs config, "
            "while its DNS-based endpoint admits no user traffic")
