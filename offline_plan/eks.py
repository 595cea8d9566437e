"""EKS's share of the offline plan: pulumi-aws's mock outputs, and where an EKS stack deploys."""

from __future__ import annotations

from typing import Any

from offline_plan.before_deploy import Item
from offline_plan.mocks import ACCOUNT, FAKE_CA, short_hash


def _cluster(name: str, inputs: dict) -> dict:
    cluster_name = inputs.get("name", name)
    return {
        "arn": f"arn:aws:eks:us-west-2:{ACCOUNT}:cluster/{cluster_name}",
        "endpoint": f"https://{short_hash(cluster_name).upper()}.gr7.us-west-2.eks.amazonaws.com",
        "certificateAuthority": {"data": FAKE_CA},
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.us-west-2.amazonaws.com/id/{short_hash(name)}"}]}],
        "vpcConfig": {**inputs.get("vpcConfig", {}), "clusterSecurityGroupId": f"sg-{short_hash(name)}"},
    }


def _iam_role(name: str, inputs: dict) -> dict:
    role_name = inputs.get("name", name)
    return {"arn": f"arn:aws:iam::{ACCOUNT}:role/{role_name}", "name": role_name}


def _iam_policy(name: str, inputs: dict) -> dict:
    return {"arn": f"arn:aws:iam::{ACCOUNT}:policy/{inputs.get('name', name)}"}


def _oidc_provider(name: str, inputs: dict) -> dict:
    return {"arn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{inputs.get('url', name)}"}


def node_group(name: str, inputs: dict) -> dict:
    """A managed node group's ARN and its Auto Scaling group (``eks-<node group>-<hash>``)."""
    return {"arn": f"arn:aws:eks:us-west-2:{ACCOUNT}:nodegroup/{name}", "resources": [
        {"autoscalingGroups": [{"name": f"eks-{inputs.get('nodeGroupName', name)}-{short_hash(name)}"}]}]}


def _kms_key(name: str, inputs: dict) -> dict:
    key_id = f"offline-{short_hash(name)}"
    return {"arn": f"arn:aws:kms:us-west-2:{ACCOUNT}:key/{key_id}", "keyId": key_id}


OUTPUTS_BY_TYPE = {
    "aws:eks/cluster:Cluster": _cluster,
    "aws:iam/role:Role": _iam_role,
    "aws:iam/policy:Policy": _iam_policy,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:eks/nodeGroup:NodeGroup": node_group,
    "aws:kms/key:Key": _kms_key,
}

CALL_RESULTS: dict[str, dict[str, Any]] = {
    "aws:index/getCallerIdentity:getCallerIdentity": {
        "accountId": ACCOUNT, "arn": f"arn:aws:iam::{ACCOUNT}:user/offline", "userId": "OFFLINE"},
    "aws:index/getPartition:getPartition": {"partition": "aws", "dnsSuffix": "amazonaws.com"},
    "aws:index/getRegion:getRegion": {"name": "us-west-2", "region": "us-west-2"},
    "aws:iam/getSessionContext:getSessionContext": {
        "arn": f"arn:aws:iam::{ACCOUNT}:user/offline", "issuerArn": f"arn:aws:iam::{ACCOUNT}:user/offline",
        "issuerId": "OFFLINE", "issuerName": "offline"},
}


def account(cfg: Any, provider: dict[str, Any]) -> Item:
    return Item("ok", "account", f"the AWS account of your credentials (`aws sts get-caller-identity`), "
                                 f"region {cfg.cluster.location}")
