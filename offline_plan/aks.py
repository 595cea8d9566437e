"""AKS's share of the offline plan: pulumi-azure-native's mock outputs, and where an AKS stack deploys."""

from __future__ import annotations

import base64
from typing import Any

from offline_plan.before_deploy import Item
from offline_plan.mocks import FAKE_CA, short_hash


def _cluster(name: str, inputs: dict) -> dict:
    cluster_name = inputs.get("resourceName", name)
    return {
        "name": cluster_name,
        "fqdn": f"{cluster_name}-{short_hash(name)[:8]}.hcp.eastus2.azmk8s.io",
        "nodeResourceGroup": f"MC_{inputs.get('resourceGroupName', 'rg')}_{cluster_name}_eastus2",
        "oidcIssuerProfile": {"enabled": True, "issuerURL": f"https://eastus2.oic.prod-aks.azure.com/{short_hash(name)}/"},
        "identityProfile": {"kubeletidentity": {"objectId": f"00000000-0000-0000-0000-{short_hash(name)}"}},
    }


def _kubeconfig() -> str:
    """A user kubeconfig as AKS returns it (base64): kubelogin, no credentials inside."""
    text = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: offline\n  cluster:\n"
        f"    certificate-authority-data: {FAKE_CA}\n    server: https://offline.hcp.eastus2.azmk8s.io:443\n"
        "contexts:\n- name: offline\n  context: {cluster: offline, user: offline}\ncurrent-context: offline\n"
        "users:\n- name: offline\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: kubelogin\n      args: [get-token, --login, azurecli, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]\n"
    )
    return base64.b64encode(text.encode()).decode()


OUTPUTS_BY_TYPE = {
    "azure-native:containerservice:ManagedCluster": _cluster,
}

CALL_RESULTS: dict[str, dict[str, Any]] = {
    "azure-native:containerservice:listManagedClusterUserCredentials": {
        "kubeconfigs": [{"name": "clusterUser", "value": _kubeconfig()}]},
}


def account(cfg: Any, provider: dict[str, Any]) -> Item:
    subscription = provider.get("azure-native:subscriptionId")
    where = f"`{subscription}` (azure-native:subscriptionId)" if subscription else \
        "of your credentials (ARM_SUBSCRIPTION_ID or `az account show`)"
    return Item("ok", "subscription", f"Azure subscription {where}, region {cfg.cluster.location}")


def deletion(cfg: Any) -> Item:
    """The stack sets no deletion protection on an AKS cluster (cluster.deletionProtection is GKE's and EKS's)."""
    return Item("ok", "deletion protection", "not set by this stack on AKS (cluster.deletionProtection "
                                             "applies to GKE and EKS)")
