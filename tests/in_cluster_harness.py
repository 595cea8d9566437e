"""Run ``stacks.in_cluster.deploy_dra_and_workloads`` alone under Pulumi mocks.

The cloud compositions need a whole cluster; the in-cluster layer only needs
a parsed config, the token secret and a Kubernetes provider. This harness uses
the offline plan's capturing monitor, so tests assert on exactly what
``pulumi preview`` would send, and it also keeps the raw (unmasked)
registrations so a test can prove where a secret value travels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from google.protobuf import json_format

from offline_plan.mocks import FungibilityMocks
from offline_plan.run import Captured, CapturingMonitor, run_program
from stacks.loader import LoadedStack

FAKE_TOKEN = "hf_fake_token_value_4c1d9e_never_in_a_manifest"
STAND_IN_DRIVER = "stand-in-dra-driver"

GKE_BASE: dict[str, Any] = {
    "cluster": {"cloud": "gke", "name": "t", "location": "us-central1", "zones": ["us-central1-c"]},
}
EKS_BASE: dict[str, Any] = {
    "cluster": {"cloud": "eks", "name": "t", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2b"]},
}


class RawCapturingMonitor(CapturingMonitor):
    """Also keeps each registration's inputs before secrets are masked."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.raw: list[tuple[str, str, dict[str, Any]]] = []

    def RegisterResource(self, request):  # noqa: N802
        self.raw.append((request.type, request.name, json_format.MessageToDict(request.object)))
        return super().RegisterResource(request)


@dataclass
class InClusterRun:
    resources: list[Captured]
    raw: list[tuple[str, str, dict[str, Any]]]
    returned: int = 0  # how many components deploy_dra_and_workloads returned

    def of_type(self, type_: str) -> list[Captured]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str) -> Captured:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"{len(found)} resources named {name!r}: {[r.urn for r in found]}"
        return found[0]

    def objects(self) -> list[dict[str, Any]]:
        """Every Kubernetes object (the inputs of kubernetes:* custom resources)."""
        return [r.inputs for r in self.resources
                if r.custom and r.type.startswith("kubernetes:") and "kind" in r.inputs]

    def object(self, kind: str, name: str) -> dict[str, Any]:
        found = [o for o in self.objects() if o["kind"] == kind and o["metadata"]["name"] == name]
        assert len(found) == 1, f"{len(found)} {kind} named {name}"
        return found[0]


def run_in_cluster(namespace_config: dict[str, Any], *, token: str | None = FAKE_TOKEN,
                   stack: str = "test") -> InClusterRun:
    """Load ``namespace_config`` (keys without ``gpu-fungibility:``) and deploy the in-cluster layer alone."""
    from stacks.in_cluster import deploy_dra_and_workloads

    monitor = RawCapturingMonitor(FungibilityMocks())
    returned: list[pulumi.Resource] = []

    def compose(loaded: LoadedStack) -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        driver = k8s.core.v1.Namespace(STAND_IN_DRIVER, metadata={"name": STAND_IN_DRIVER},
                                       opts=pulumi.ResourceOptions(provider=provider))
        returned.extend(deploy_dra_and_workloads(loaded, provider, [driver]))

    config = {**namespace_config, "hfToken": token} if token is not None else dict(namespace_config)
    run = run_program(config, secret_keys=("hfToken",) if token is not None else (), stack=stack,
                      compose_fn=compose, monitor=monitor)
    return InClusterRun(run.resources, monitor.raw, len(returned))


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
