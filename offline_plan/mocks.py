"""Pulumi mocks with plausible, deterministic outputs.

Resources echo their inputs (as a provider would in a preview) plus the few
computed outputs the program reads back: cluster endpoints and CA data for the
Kubernetes provider, IAM ARNs, network ids. Every value is derived from the
resource name so that two runs are byte-identical.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pulumi

ACCOUNT = "123456789012"
FAKE_CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nofflineplan\n-----END CERTIFICATE-----\n").decode()


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _gke_cluster(name: str, inputs: dict) -> dict:
    endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
    dns = {**(endpoints.get("dnsEndpointConfig") or {}),
           # GKE's form: gke-<hash>-<project number>.<location>.gke.goog
           "endpoint": f"gke-{_short_hash(inputs.get('name', name))}-123456789012.{inputs.get('location', 'x')}.gke.goog"}
    return {
        "endpoint": "203.0.113.10",
        "controlPlaneEndpointsConfig": {**endpoints, "dnsEndpointConfig": dns},
        "masterAuth": {"clusterCaCertificate": FAKE_CA},
        "selfLink": f"https://container.googleapis.com/v1/projects/demo/locations/x/clusters/{inputs.get('name', name)}",
    }


def _eks_cluster(name: str, inputs: dict) -> dict:
    cluster_name = inputs.get("name", name)
    return {
        "arn": f"arn:aws:eks:us-west-2:{ACCOUNT}:cluster/{cluster_name}",
        "endpoint": f"https://{_short_hash(cluster_name).upper()}.gr7.us-west-2.eks.amazonaws.com",
        "certificateAuthority": {"data": FAKE_CA},
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.us-west-2.amazonaws.com/id/{_short_hash(name)}"}]}],
        "vpcConfig": {**inputs.get("vpcConfig", {}), "clusterSecurityGroupId": f"sg-{_short_hash(name)}"},
    }


def _iam_role(name: str, inputs: dict) -> dict:
    role_name = inputs.get("name", name)
    return {"arn": f"arn:aws:iam::{ACCOUNT}:role/{role_name}", "name": role_name}


def _iam_policy(name: str, inputs: dict) -> dict:
    return {"arn": f"arn:aws:iam::{ACCOUNT}:policy/{inputs.get('name', name)}"}


def _oidc_provider(name: str, inputs: dict) -> dict:
    return {"arn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{inputs.get('url', name)}"}


def _node_group(name: str, inputs: dict) -> dict:
    return {"arn": f"arn:aws:eks:us-west-2:{ACCOUNT}:nodegroup/{name}", "resources": [
        {"autoscalingGroups": [{"name": f"eks-{inputs.get('nodeGroupName', name)}-{_short_hash(name)}"}]}]}


def _kms_key(name: str, inputs: dict) -> dict:
    key_id = f"offline-{_short_hash(name)}"
    return {"arn": f"arn:aws:kms:us-west-2:{ACCOUNT}:key/{key_id}", "keyId": key_id}


def _aks_cluster(name: str, inputs: dict) -> dict:
    cluster_name = inputs.get("resourceName", name)
    return {
        "name": cluster_name,
        "fqdn": f"{cluster_name}-{_short_hash(name)[:8]}.hcp.eastus2.azmk8s.io",
        "nodeResourceGroup": f"MC_{inputs.get('resourceGroupName', 'rg')}_{cluster_name}_eastus2",
        "oidcIssuerProfile": {"enabled": True, "issuerURL": f"https://eastus2.oic.prod-aks.azure.com/{_short_hash(name)}/"},
        "identityProfile": {"kubeletidentity": {"objectId": f"00000000-0000-0000-0000-{_short_hash(name)}"}},
    }


def _aks_kubeconfig() -> str:
    """A user kubeconfig as AKS returns it (base64): kubelogin, no credentials inside."""
    text = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: offline\n  cluster:\n"
        f"    certificate-authority-data: {FAKE_CA}\n    server: https://offline.hcp.eastus2.azmk8s.io:443\n"
        "contexts:\n- name: offline\n  context: {cluster: offline, user: offline}\ncurrent-context: offline\n"
        "users:\n- name: offline\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: kubelogin\n      args: [get-token, --login, azurecli, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]\n"
    )
    return base64.b64encode(text.encode()).decode()


def _service_account(name: str, inputs: dict) -> dict:
    return {"email": f"{inputs.get('accountId', name)}@demo-project.iam.gserviceaccount.com"}


#: Extra outputs per resource type, merged over the echoed inputs.
OUTPUTS_BY_TYPE = {
    "gcp:container/cluster:Cluster": _gke_cluster,
    "aws:eks/cluster:Cluster": _eks_cluster,
    "aws:iam/role:Role": _iam_role,
    "aws:iam/policy:Policy": _iam_policy,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:eks/nodeGroup:NodeGroup": _node_group,
    "aws:kms/key:Key": _kms_key,
    "gcp:serviceaccount/account:Account": _service_account,
    "azure-native:containerservice:ManagedCluster": _aks_cluster,
}

#: Results of provider functions (invokes) the program calls.
CALL_RESULTS: dict[str, dict[str, Any]] = {
    "aws:index/getCallerIdentity:getCallerIdentity": {
        "accountId": ACCOUNT, "arn": f"arn:aws:iam::{ACCOUNT}:user/offline", "userId": "OFFLINE"},
    "aws:index/getPartition:getPartition": {"partition": "aws", "dnsSuffix": "amazonaws.com"},
    "aws:index/getRegion:getRegion": {"name": "us-west-2", "region": "us-west-2"},
    "aws:iam/getSessionContext:getSessionContext": {
        "arn": f"arn:aws:iam::{ACCOUNT}:user/offline", "issuerArn": f"arn:aws:iam::{ACCOUNT}:user/offline",
        "issuerId": "OFFLINE", "issuerName": "offline"},
    "gcp:organizations/getClientConfig:getClientConfig": {"project": "demo-project", "region": "us-central1"},
    "gcp:organizations/getProject:getProject": {"number": "123456789012", "projectId": "demo-project"},
    "azure-native:containerservice:listManagedClusterUserCredentials": {
        "kubeconfigs": [{"name": "clusterUser", "value": _aks_kubeconfig()}]},
}


class FungibilityMocks(pulumi.runtime.Mocks):
    """Deterministic mocks for every provider the program uses."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        inputs = dict(args.inputs)
        extra = OUTPUTS_BY_TYPE.get(args.typ)
        outputs = {**inputs, **(extra(args.name, inputs) if extra else {})}
        resource_id = outputs.get("name") if isinstance(outputs.get("name"), str) else None
        return f"{resource_id or args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return CALL_RESULTS.get(args.token, {})
