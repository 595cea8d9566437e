"""`pulumi up` by the real engine, the Kubernetes half onto the rehearsal's Kubernetes control plane.

The stand-in cloud plugins answer the control plane's address and CA as the cluster's; the kubeconfig each
cloud's program builds (DNS endpoint and gke-gcloud-auth-plugin on GKE, `aws eks get-token` on EKS, kubelogin on
AKS) must then carry the real pulumi-kubernetes provider to a real API server, where it creates the objects.
Every failure must be one the offline setting explains (a Helm chart that cannot be fetched, a quota status no
controller writes), never one of the stack's own.
"""

from __future__ import annotations

import pytest

from pulumi_engine.up import up_on_rehearsal
from tests.ci import unavailable
from tools.stacks_in_ci import SHIPPED_STACKS

#: An object of each shipped stack that needs no Helm chart, so the real provider must have created it.
CREATED = {"dev": ("daemonsets", "kube-system/nvidia-driver-installer"),
           "prod": ("daemonsets", "kube-system/nvidia-driver-installer"),
           "eks-dev": ("namespaces", "dra-driver-nvidia-gpu"),
           "aks-dev": ("namespaces", "dra-driver-nvidia-gpu")}


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_the_real_provider_applies_the_stack_to_a_real_api_server_through_the_programs_kubeconfig(
        engine_tools, stack):
    from rehearse.control_plane import HarnessError, HarnessUnavailable

    try:
        run = up_on_rehearsal(stack, tools=engine_tools)
    except (HarnessUnavailable, HarnessError) as exc:
        unavailable(f"the rehearsal control plane is not available: {exc}")
    assert not run.stack_failures, "\n".join(f"{u}: {m}" for u, m in run.stack_failures.items()) + run.stderr[-2000:]
    kind, name = CREATED[stack]
    assert name in run.on_the_api_server[kind], (run.summary, run.on_the_api_server)
    assert run.created, run.summary
