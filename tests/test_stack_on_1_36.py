"""A stack pinned to Kubernetes 1.36 plans (policy pack and simulated placement included) and simulates with
1.36's DRA gates on: partitionable devices and device taints honoured, its device tolerations on every
request of its claim. No Go: tests/rehearsal/test_stack_on_1_36.py rehearses the same copy on v1.36.3."""

from __future__ import annotations

import yaml

from offline_plan.__main__ import main as plan_main
from rehearse import scenario
from simulator import SCHEDULED, simulate
from simulator.engine import Simulation
from simulator.workloads import pod_specs
from tests import stack_on_1_36
from tests.stack_on_1_36 import STACK, TOLERATION


def test_the_stack_plans_on_1_36_with_the_policy_pack_and_its_tolerations(tmp_path):
    folder = stack_on_1_36.write(tmp_path)
    assert plan_main(["--stack", STACK, "--stack-dir", str(folder), "--out", str(tmp_path / "build")]) == 0
    out = tmp_path / "build" / STACK
    assert "Kubernetes 1.36" in (out / "summary.md").read_text()
    template = yaml.safe_load(
        (out / "manifests" / "inference--resourceclaimtemplate.resource.k8s.io--vllm-gpu-claim.yaml").read_text())
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert [sub["tolerations"] for sub in request["firstAvailable"]] == [[TOLERATION]] * len(request["firstAvailable"])


def test_the_stack_simulates_with_1_36s_gates_on(tmp_path):
    s = scenario.load(STACK, stack_on_1_36.write(tmp_path))
    assert s.minor == "1.36"
    features = Simulation(s.cfg, s.objects(), ()).allocator.features
    assert features.partitionable and features.device_taints
    gpu = next(p for p in pod_specs(s.cfg, s.objects()) if p.workload == "vllm-gpu")
    assert all(alt.tolerations for claim in gpu.claims for request in claim.requests for alt in request.alternatives)
    result = simulate(s.cfg, s.objects())
    assert [r.status for r in result.of("vllm-gpu")] == [SCHEDULED]
    assert [r.status for r in result.of("vllm-tpu")] == [SCHEDULED]


def test_the_same_stack_on_1_35_has_neither_gate():
    s = scenario.load("dev")
    features = Simulation(s.cfg, s.objects(), ()).allocator.features
    assert s.minor == "1.35" and not features.partitionable and not features.device_taints
