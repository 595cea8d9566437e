"""examples/gke-dra-gpu: a program outside the stack composes the library directly and plans offline."""

import json
from pathlib import Path

import pytest

from offline_plan.planjson import plan_document
from offline_plan.run import run_program_file
from policy_gate.gate import run_gate

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gke-dra-gpu"


@pytest.fixture(scope="module")
def run():
    return run_program_file(EXAMPLE)


def _one(run, type_, name):
    return next(r for r in run.resources if r.type == type_ and r.name == name)


def test_the_example_has_its_own_project_and_no_stack_config():
    assert "gpu-fungibility:" not in (EXAMPLE / "__main__.py").read_text()
    assert (EXAMPLE / "Pulumi.yaml").read_text().startswith("name: gke-dra-gpu")
    assert "gpu-fungibility-components" in (EXAMPLE / "requirements.txt").read_text()


def test_it_builds_a_cluster_a_dra_gpu_pool_the_driver_and_a_workload(run):
    types = {r.type for r in run.resources}
    assert {"gpu-fungibility:index:GkeCluster", "gpu-fungibility:index:GkeGpuNodePool",
            "gpu-fungibility:index:NvidiaDraDriver", "gpu-fungibility:index:VllmWorkload"} <= types
    pool = _one(run, "gcp:container/nodePool:NodePool", "l4-nodepool").inputs
    accelerator = pool["nodeConfig"]["guestAccelerators"][0]
    assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    assert pool["nodeConfig"]["labels"]["nvidia.com/gpu.dra"] == "true"


def test_outputs_flow_from_the_pool_into_the_driver_and_the_workload(run):
    values = _one(run, "kubernetes:helm.sh/v3:Release", "nvidia-dra-release").inputs["values"]
    tolerated = {t["key"] for t in values["kubeletPlugin"]["tolerations"]}
    assert "nvidia.com/gpu" in tolerated
    pod = _one(run, "kubernetes:apps/v1:Deployment", "chat-deployment").inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "l4"}
    assert pod["resourceClaims"][0]["resourceClaimTemplateName"] == "chat-claim"
    template = _one(run, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "claims-template-chat").inputs
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert "nvidia-l4" in json.dumps(request) or "L4" in json.dumps(request)


def test_the_policy_pack_passes_the_example(run):
    result = run_gate(plan_document(run))
    assert not result.mandatory, result.mandatory
