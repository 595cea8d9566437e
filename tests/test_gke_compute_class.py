"""ComputeClass priorities follow the configured pool order (a reordered stack, under mocks)."""

from __future__ import annotations

import pytest
from gpu_fungibility.clouds.gke.compute_class import compute_class_spec

from offline_plan.run import PlanRun, run_stack

GPU_POOLS = {
    "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb"},
                  "autoscaling": {"min": 0, "max": 2}},
    "a100-40gb": {"machineType": "a2-highgpu-2g", "accelerator": {"type": "nvidia-tesla-a100", "count": 2},
                  "autoscaling": {"min": 0, "max": 2}},
    "l4": {"machineType": "g2-standard-24", "accelerator": {"type": "nvidia-l4", "count": 2},
           "autoscaling": {"min": 0, "max": 4}},
}
REORDERED = ["l4", "a100-40gb", "a100-80gb"]  # neither the nodePools order nor seed 000's


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return run_stack({
        "cluster": {"cloud": "gke", "name": "ccc", "location": "us-central1", "zones": ["us-central1-c"]},
        "nodePools": GPU_POOLS,
        "computeClasses": {"fallback": {
            "pools": REORDERED, "whenUnsatisfiable": "ScaleUpAnyway",
            "activeMigration": {"optimizeRulePriority": False},
        }},
    })


def test_priorities_follow_the_configured_order(run):
    res = run.named("fallback-computeclass")
    assert res.inputs["spec"]["priorities"] == [{"nodepools": [p]} for p in REORDERED], res.urn


def test_optional_policies_are_passed_through(run):
    spec = run.named("fallback-computeclass").inputs["spec"]
    assert spec["whenUnsatisfiable"] == "ScaleUpAnyway"
    assert spec["activeMigration"] == {"optimizeRulePriority": False}
    assert "autoscalingPolicy" not in spec, "no consolidation delay configured, none set"
    assert spec["nodePoolAutoCreation"] == {"enabled": False}, "GKE cannot auto-create DRA node pools"


def test_each_pool_carries_its_class_label_and_taint(run):
    for name in REORDERED:
        res = run.named(f"{name}-nodepool")
        node = res.inputs["nodeConfig"]
        assert node["labels"]["cloud.google.com/compute-class"] == "fallback", res.urn
        assert {"key": "cloud.google.com/compute-class", "value": "fallback", "effect": "NO_SCHEDULE"} \
            in node["taints"], res.urn


def test_class_waits_for_every_pool_it_names(run):
    deps = run.named("fallback").dependencies
    for name in REORDERED:
        assert run.named(f"{name}-nodepool").urn in deps, name


def test_spec_function_keeps_order_and_omits_unset_fields():
    assert compute_class_spec(["b", "a"], consolidation_delay_minutes=5) == {
        "priorities": [{"nodepools": ["b"]}, {"nodepools": ["a"]}],
        "nodePoolAutoCreation": {"enabled": False},
        "autoscalingPolicy": {"consolidationDelayMinutes": 5},
    }
