"""GKE's share of the real-engine path: the pulumi-gcp stand-in, and the GKE cluster pointed at the rehearsal.

The cluster's kubeconfig (components/clouds/gke/cluster.py) reaches the API server at the cluster's ``endpoint``, or at
its DNS endpoint when the stack asks for it, with the CA of ``masterAuth``, and authenticates with
``gke-gcloud-auth-plugin``.
"""

from __future__ import annotations

from typing import Any

from gpu_fungibility.clouds.gke import PROFILE
from gpu_fungibility.clouds.gke.cluster import AUTH_PLUGIN

from pulumi_engine.cloud_parts import ApiServer

STANDIN_PACKAGES = {"gcp": "pulumi_gcp"}
CREDENTIAL_OUTPUTS = {
    PROFILE.cluster_type: ("endpoint", "masterAuth", "controlPlaneEndpointsConfig.dnsEndpointConfig.endpoint"),
}
AUTH_COMMANDS = (AUTH_PLUGIN,)


def outputs_at(type_: str, outputs: dict[str, Any], api: ApiServer) -> dict[str, Any]:
    """The cluster's endpoint and DNS endpoint the bare host of ``api`` (GKE answers no scheme), its CA ``api``'s."""
    outputs["endpoint"] = api.host
    outputs["masterAuth"] = {**(outputs.get("masterAuth") or {}), "clusterCaCertificate": api.ca}
    dns = (outputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
    if isinstance(dns, dict):
        dns["endpoint"] = api.host
    return outputs
