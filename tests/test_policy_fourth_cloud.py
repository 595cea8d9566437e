"""A cloud registered at runtime from outside the project runs the policy pack with its own modules.

ZKC (tests/zkc/) registers a profile naming its resource types and its share of the pack (its ``parts``);
no shared module of the pack knows it. The shared rules read its pools, hand it its own questions (the
order of a claim's alternatives, whether its control plane is reachable, where its versions live), and its
own policy joins the pack's.
"""

from __future__ import annotations

import pytest
from gpu_fungibility import clouds

from policies.rules import cloud_policies
from policies.rules.capacity import validate_accelerator_pools_spot
from policies.rules.claims import validate_claim_follows_compute_class
from policies.rules.endpoint import validate_control_plane_reachable
from policies.rules.placement import validate_dra_pool_served
from policies.rules.versions import validate_kubernetes_version
from policies.stack_view import StackView, res_of
from tests.policy_fixtures import R, gpu_claim_template, run_resource_rule, run_stack_rule, stack_args, vllm_deployment


@pytest.fixture(autouse=True)
def zkc():
    from tests import zkc as module

    clouds.register(module.PROFILE)
    yield module
    clouds.PROFILES.pop(module.PROFILE.name, None)


def cluster(version: str = "1.35", public: bool = True) -> R:
    return R("zkc:index/cluster:Cluster", "zkc-cluster", {"name": "demo", "kubernetesVersion": version,
                                                         "publicEndpoint": public})


def pool(name: str, machine: str = "z1-gpu-8", priority: int | None = None, spot: bool = True,
         dra: bool = False) -> R:
    return R("zkc:index/nodePool:NodePool", f"{name}-pool", {
        "name": name, "machineType": machine, "spot": spot, "minNodes": 1,
        "labels": {"nvidia.com/gpu.dra": "true"} if dra else {}, "taints": [],
        "resourceLabels": {"zkc.example/priority": str(priority)} if priority is not None else {},
    })


def test_the_view_finds_the_stack_s_cloud_and_reads_its_pools_with_its_module():
    view = StackView([res_of(a) for a in stack_args([cluster(), pool("h100", priority=10),
                                                     pool("cpu", machine="z1-cpu")]).resources])
    assert view.cloud == "zkc"
    assert [(p.pool_name, p.family, p.accelerator_type, p.node_labels["zkc.example/pool"]) for p in view.pools] == [
        ("h100", "gpu", "nvidia-h100-80gb", "h100"), ("cpu", "cpu", None, "cpu")]


def test_its_own_policy_joins_the_pack_s():
    assert "zkc-pool-priority" in [p.name for p in cloud_policies()]


def test_the_shared_resource_rules_read_its_fields():
    assert run_resource_rule(validate_accelerator_pools_spot, [pool("h100", spot=False)]).messages == [
        "pool h100 (nvidia-h100-80gb) is on-demand. Use spot capacity, or mark it as the deliberate on-demand "
        "fallback (node label gpu-fungibility/on-demand-fallback=true, or list it in this policy's onDemandPools "
        "config)."]
    (message,) = run_resource_rule(validate_kubernetes_version, [cluster("1.33")]).messages
    assert message.startswith("kubernetesVersion is 1.33")


def test_its_claim_order_check_runs_for_claim_follows_compute_class():
    template = gpu_claim_template("llm", [("h100", 1, "NVIDIA H100 80GB HBM3"), ("l4", 1, "NVIDIA L4")])
    workload = vllm_deployment("llm", "llm", {})
    ordered = [cluster(), pool("h100", priority=10), pool("l4", "z1-gpu-1", priority=5), template, workload]
    assert run_stack_rule(validate_claim_follows_compute_class, ordered).messages == []
    reversed_ = [cluster(), pool("h100", priority=5), pool("l4", "z1-gpu-1", priority=10), template, workload]
    (message,) = run_stack_rule(validate_claim_follows_compute_class, reversed_).messages
    assert "ZKC ranks them [5, 10]" in message


def test_its_endpoint_verdict_runs_for_control_plane_reachable():
    private = cluster(public=False)
    provider = R("pulumi:providers:kubernetes", "zkc-k8s", {"kubeconfig": "[secret]"}, dependencies=[private.urn])
    (message,) = run_stack_rule(validate_control_plane_reachable, [private, provider]).messages
    assert "its endpoint is private" in message and message.endswith("this policy's runnerCidrs config.")
    assert run_stack_rule(validate_control_plane_reachable, [private, provider],
                          {"runnerCidrs": ["10.0.0.0/24"]}).messages == []


def test_a_dra_pool_it_does_not_serve_is_reported_by_the_shared_rule():
    (message,) = run_stack_rule(validate_dra_pool_served, [cluster(), pool("h100", dra=True)]).messages
    assert message.startswith("pool h100 is labelled for DRA")


def test_the_support_rules_read_its_version_and_date_nothing_they_do_not_know():
    import datetime as dt

    from policies.rules.support import validate_version_advisories, validate_version_supported
    from tests.policy_fixtures import Collector, resource_args

    supported, advised = Collector(), Collector()
    validate_version_supported(resource_args(cluster("1.35")), supported, today=dt.date(2026, 1, 1))
    validate_version_advisories(resource_args(cluster("1.35")), advised, today=dt.date(2026, 1, 1))
    assert supported.messages == []
    assert [m.split(" (")[0] for m in advised.messages] == ["no cited support calendar entry for Kubernetes 1.35 on ZKC"]


def test_the_pack_loaded_as_the_engine_loads_it_runs_the_cloud_named_in_the_environment():
    """As the engine runs it: the pack under its private name, from its folder, the cloud registered by
    GPU_FUNGIBILITY_CLOUDS; the cloud's modules import ``policies.*`` and get the pack's own modules."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    program = """
import importlib, importlib.util, sys
from pathlib import Path
folder = Path.cwd()
spec = importlib.util.spec_from_file_location("gpu_fungibility_policy_pack", folder / "__init__.py",
                                              submodule_search_locations=[str(folder)])
package = importlib.util.module_from_spec(spec)
sys.modules["gpu_fungibility_policy_pack"] = package
spec.loader.exec_module(package)
rules = importlib.import_module("gpu_fungibility_policy_pack.rules")
claims = importlib.import_module("gpu_fungibility_policy_pack.rules.claims")
print([p.name for p in rules.POLICIES][-1])
print(sys.modules["policies.stack_view"] is sys.modules["gpu_fungibility_policy_pack.stack_view"])
from tests.policy_fixtures import gpu_claim_template, run_stack_rule, vllm_deployment
from tests.test_policy_fourth_cloud import cluster, pool
template = gpu_claim_template("llm", [("h100", 1, "NVIDIA H100 80GB HBM3"), ("l4", 1, "NVIDIA L4")])
stack = [cluster(), pool("h100", priority=5), pool("l4", "z1-gpu-1", priority=10), template,
         vllm_deployment("llm", "llm", {})]
print(run_stack_rule(claims.validate_claim_follows_compute_class, stack).messages)
"""
    env = {**os.environ, "GPU_FUNGIBILITY_CLOUDS": "tests.zkc", "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", program], cwd=root / "policies", env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    last_policy, same_modules, messages = done.stdout.splitlines()
    assert (last_policy, same_modules) == ("zkc-pool-priority", "True")
    assert "ZKC ranks them [5, 10]" in messages
