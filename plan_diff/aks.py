"""AKS's share of the plan diff: which azure-native changes replace a resource, from pulumi-azure-native's own
sources, and what a replaced cluster or agent pool means.

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

from typing import Any

from plan_diff.rules import Rule, rules_from

AZURE_NATIVE_REPLACEMENT = ("pulumi/pulumi-azure-native provider/pkg/gen/replacement.go (forceNewMap), read at "
                            "1b7112af33c62b247daed1028686bf279f4d5e69 for the pinned pulumi-azure-native 3.29.0")
AZURE_NATIVE_PATH = ("the Azure resource id (URL path parameters of the azure-native resource), read in its pinned "
                     "pulumi-azure-native 3.29.0 SDK's Args")

CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"

REPLACEMENT_RULES: dict[str, list[Rule]] = {
    CLUSTER_TYPE: [
        *rules_from(AZURE_NATIVE_PATH, "resourceGroupName", "resourceName"),
        *rules_from(AZURE_NATIVE_REPLACEMENT, "diskEncryptionSetID", "dnsPrefix", "fqdnSubdomain", "linuxProfile",
                    "location", "networkProfile", "nodeResourceGroup", "windowsProfile"),
    ],
    AGENT_POOL_TYPE: [
        *rules_from(AZURE_NATIVE_PATH, "resourceGroupName", "resourceName", "agentPoolName"),
        *rules_from(AZURE_NATIVE_REPLACEMENT, "gpuInstanceProfile", "vmSize", "networkProfile.nodePublicIPTags"),
    ],
    "azure-native:network:VirtualNetwork": [
        *rules_from(AZURE_NATIVE_PATH, "resourceGroupName", "virtualNetworkName"),
        *rules_from(AZURE_NATIVE_REPLACEMENT, "location"),
    ],
    "azure-native:network:Subnet": rules_from(AZURE_NATIVE_PATH, "resourceGroupName", "virtualNetworkName",
                                              "subnetName"),
    "azure-native:resources:ResourceGroup": [
        *rules_from(AZURE_NATIVE_PATH, "resourceGroupName"),
        *rules_from(AZURE_NATIVE_REPLACEMENT, "location"),
    ],
}

CLUSTERS = {CLUSTER_TYPE: "AKS cluster"}
POOLS = {AGENT_POOL_TYPE: "agent pool"}


def accelerator(type_: str, inputs: dict[str, Any]) -> str | None:
    """"GPU" for an agent pool that carries accelerators (a GPU profile or GPU labels), None otherwise."""
    if type_ != AGENT_POOL_TYPE:
        return None
    labels = inputs.get("nodeLabels") or {}
    if inputs.get("gpuProfile") or any("nvidia.com/gpu" in k for k in labels):
        return "GPU"
    return None
