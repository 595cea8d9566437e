"""AKS's share of the real-engine path: the pulumi-azure-native stand-in, and the AKS credentials pointed at the
rehearsal.

The program reads the cluster's kubeconfig from ``listManagedClusterUserCredentials`` (components/clouds/aks/cluster.py),
not from the cluster's outputs; that kubeconfig authenticates with ``kubelogin``.
"""

from __future__ import annotations

from typing import Any

from pulumi_engine.cloud_parts import ApiServer

STANDIN_PACKAGES = {"azure-native": "pulumi_azure_native"}
CREDENTIAL_INVOKES = ("azure-native:containerservice:listManagedClusterUserCredentials",)
AUTH_COMMANDS = ("kubelogin",)


def invoke_at(token: str, result: dict[str, Any], api: ApiServer) -> dict[str, Any]:
    """The user credentials (base64 kubeconfigs) with every cluster's server and CA ``api``'s."""
    import base64

    import yaml

    for entry in result.get("kubeconfigs") or []:
        config = yaml.safe_load(base64.b64decode(entry["value"]))
        for item in config.get("clusters") or []:
            item["cluster"] = {"server": api.server, "certificate-authority-data": api.ca}
        entry["value"] = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    return result
