"""EKS's share of the real-engine path: the pulumi-aws stand-in, and the EKS cluster pointed at the rehearsal.

The cluster's kubeconfig (components/clouds/eks/cluster.py) reaches the API server at the cluster's ``endpoint`` with
the CA of ``certificateAuthority.data``, and authenticates with ``aws eks get-token``.
"""

from __future__ import annotations

from typing import Any

from gpu_fungibility.clouds.eks import PROFILE

from pulumi_engine.cloud_parts import ApiServer

STANDIN_PACKAGES = {"aws": "pulumi_aws"}
CREDENTIAL_OUTPUTS = {PROFILE.cluster_type: ("endpoint", "certificateAuthority")}
AUTH_COMMANDS = ("aws",)


def outputs_at(type_: str, outputs: dict[str, Any], api: ApiServer) -> dict[str, Any]:
    """The cluster's endpoint ``api``'s URL (EKS answers it with its scheme), its CA ``api``'s."""
    outputs["endpoint"] = api.server
    outputs["certificateAuthority"] = {"data": api.ca}
    return outputs
