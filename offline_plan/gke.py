"""GKE's share of the offline plan: pulumi-gcp's mock outputs, and where a GKE stack deploys."""

from __future__ import annotations

from typing import Any

from offline_plan.before_deploy import Item
from offline_plan.mocks import ACCOUNT, FAKE_CA, short_hash


def _cluster(name: str, inputs: dict) -> dict:
    endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
    dns = {**(endpoints.get("dnsEndpointConfig") or {}),
           # GKE's form: gke-<hash>-<project number>.<location>.gke.goog
           "endpoint": f"gke-{short_hash(inputs.get('name', name))}-{ACCOUNT}.{inputs.get('location', 'x')}.gke.goog"}
    return {
        "endpoint": "203.0.113.10",
        "controlPlaneEndpointsConfig": {**endpoints, "dnsEndpointConfig": dns},
        "masterAuth": {"clusterCaCertificate": FAKE_CA},
        "selfLink": f"https://container.googleapis.com/v1/projects/demo/locations/x/clusters/{inputs.get('name', name)}",
    }


def _service_account(name: str, inputs: dict) -> dict:
    return {"email": f"{inputs.get('accountId', name)}@demo-project.iam.gserviceaccount.com"}


OUTPUTS_BY_TYPE = {
    "gcp:container/cluster:Cluster": _cluster,
    "gcp:serviceaccount/account:Account": _service_account,
}

CALL_RESULTS: dict[str, dict[str, Any]] = {
    "gcp:organizations/getClientConfig:getClientConfig": {"project": "demo-project", "region": "us-central1"},
    "gcp:organizations/getProject:getProject": {"number": ACCOUNT, "projectId": "demo-project"},
}


def account(cfg: Any, provider: dict[str, Any]) -> Item:
    location = cfg.cluster.location
    project = provider.get("gcp:project")
    if project:
        return Item("ok", "project", f"Google Cloud project `{project}` (gcp:project), {location}")
    return Item("warning", "project", "gcp:project is not set: the provider uses your gcloud default "
                                      f"project; set it with `pulumi config set gcp:project <project>` ({location})")


def control_plane_items(cfg: Any) -> list[Item]:
    if not cfg.cluster.control_plane.dns_endpoint:
        return []
    return [Item("ok", "control plane", "`pulumi up` and kubectl use the DNS endpoint "
                                        "(IAM-authorized, reachable from anywhere)")]
