"""Which changed properties replace an azure-native resource, from pulumi-azure-native's own sources.

pulumi-azure-native decides replacements from two sources (both read here):

- ``provider/pkg/gen/replacement.go`` (``forceNewMap``), read at 1b7112af33c62b247daed1028686bf279f4d5e69
  and at the older version the search index holds: ManagedCluster ``diskEncryptionSetID``, ``dnsPrefix``,
  ``fqdnSubdomain``, ``linuxProfile``, ``location``, ``nodeResourceGroup``, ``windowsProfile`` and
  ``networkProfile``; AgentPool ``gpuInstanceProfile``, ``vmSize`` and ``networkProfile.nodePublicIPTags``;
  VirtualNetwork and ResourceGroup ``location``; Subnet nothing. The newer file narrows ``networkProfile`` to
  some of its fields (serviceCidr, dnsServiceIP, networkPlugin, networkPluginMode, podCidr, networkPolicy,
  outboundType, ...); which of the two the pinned 3.29 carries is not checked here, so the whole
  ``networkProfile`` replaces: the cautious reading.
- the resource's URL path parameters (``resourceGroupName``, ``resourceName``, ``agentPoolName``,
  ``virtualNetworkName``, ``subnetName``): the Azure resource id is built from them, so another value is
  another resource.

Not modelled: properties the Azure REST specs mark ``x-ms-mutability: [read, create]``, which the provider
also treats as create-only; the AKS API's own refusals of some updates (it answers an error rather than
replacing).
"""

from __future__ import annotations

from plan_diff.properties import parse_path

AZURE_NATIVE_REPLACEMENT = ("pulumi/pulumi-azure-native provider/pkg/gen/replacement.go (forceNewMap), read at "
                            "1b7112af33c62b247daed1028686bf279f4d5e69 for the pinned pulumi-azure-native 3.29.0")
AZURE_NATIVE_PATH = ("the Azure resource id (URL path parameters of the azure-native resource), read in its pinned "
                     "pulumi-azure-native 3.29.0 SDK's Args")


def _table(rule_type: type, source: str, *paths: str) -> list:
    return [rule_type(parse_path(p), source) for p in paths]


def azure_native_rules(rule_type: type) -> dict[str, list]:
    """Replacement rules by azure-native type, as ``rule_type(path, source)``: ``plan_diff.rules`` builds
    its ``AKS_TABLES`` from this beside ``GKE_TABLES`` and ``EKS_TABLES`` (it passes its ``Rule`` in, so this
    module does not import it back)."""
    return {
        "azure-native:containerservice:ManagedCluster": [
            *_table(rule_type, AZURE_NATIVE_PATH, "resourceGroupName", "resourceName"),
            *_table(rule_type, AZURE_NATIVE_REPLACEMENT, "diskEncryptionSetID", "dnsPrefix", "fqdnSubdomain",
                    "linuxProfile", "location", "networkProfile", "nodeResourceGroup", "windowsProfile"),
        ],
        "azure-native:containerservice:AgentPool": [
            *_table(rule_type, AZURE_NATIVE_PATH, "resourceGroupName", "resourceName", "agentPoolName"),
            *_table(rule_type, AZURE_NATIVE_REPLACEMENT, "gpuInstanceProfile", "vmSize",
                    "networkProfile.nodePublicIPTags"),
        ],
        "azure-native:network:VirtualNetwork": [
            *_table(rule_type, AZURE_NATIVE_PATH, "resourceGroupName", "virtualNetworkName"),
            *_table(rule_type, AZURE_NATIVE_REPLACEMENT, "location"),
        ],
        "azure-native:network:Subnet": _table(rule_type, AZURE_NATIVE_PATH, "resourceGroupName",
                                              "virtualNetworkName", "subnetName"),
        "azure-native:resources:ResourceGroup": [
            *_table(rule_type, AZURE_NATIVE_PATH, "resourceGroupName"),
            *_table(rule_type, AZURE_NATIVE_REPLACEMENT, "location"),
        ],
    }
