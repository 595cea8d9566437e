"""``python -m simulator``: flags, exit codes and messages; and the dev stack's own plan."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

import offline_plan.manifests
import offline_plan.run
from simulator.__main__ import main
from stacks.loader import parse_stack_config
from tests.test_simulator import GKE_DEV, gpu_objects, tpu_objects


@pytest.fixture()
def fake_plan(monkeypatch):
    """Replace the offline plan by the seed objects (fast; the real plan is tested below)."""
    cfg = parse_stack_config(copy.deepcopy(GKE_DEV))
    objects = gpu_objects() + tpu_objects()
    state = {"objects": objects}

    def run_stack_file(stack):
        if stack != "dev":
            raise FileNotFoundError(f"no stack file Pulumi.{stack}.yaml; stacks here: dev")
        return SimpleNamespace(config=cfg, stack=stack)

    monkeypatch.setattr(offline_plan.run, "run_stack_file", run_stack_file)
    monkeypatch.setattr(offline_plan.manifests, "kubernetes_objects", lambda run: copy.deepcopy(state["objects"]))
    return state


def test_json_output_for_one_workload(fake_plan, capsys):
    assert main(["--stack", "dev", "--replicas", "3", "--workload", "vllm-gpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    gpu = [(r["pool"], r["tensorParallelSize"]) for r in data["replicas"] if r["workload"] == "vllm-gpu"]
    assert gpu == [("a100-80gb", 1), ("a100-80gb", 1), ("a100-40gb", 2)]
    # the other workload keeps its own replica count
    assert [r["replica"] for r in data["replicas"] if r["workload"] == "vllm-tpu"] == [1]


def test_replicas_apply_to_every_workload_without_workload_flag(fake_plan, capsys):
    assert main(["--stack", "dev", "--replicas", "2", "--stockout", "a100-80gb"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["WORKLOAD", "REPLICA", "STATUS"]
    assert "no capacity: tpu-v6e is at max (1 node" in out
    assert "a100-80gb: 1 node (min 1, max 2) (stocked out)" in out


@pytest.mark.parametrize("argv, message", [
    (["--stack", "qa", "--replicas", "1"], "unknown stack 'qa'"),
    (["--stack", "dev", "--replicas", "1", "--workload", "llama"], "unknown workload 'llama'; workloads: vllm-gpu"),
    (["--stack", "dev", "--replicas", "1", "--stockout", "a100-80gb,h100"], "unknown pool in stockout: h100"),
    (["--stack", "dev", "--replicas", "-1"], "--replicas must be a whole number, 0 or more (e.g. 3); got '-1'"),
    (["--stack", "dev", "--replicas", "x"], "--replicas must be a whole number, 0 or more (e.g. 3); got 'x'"),
    (["--stack", "dev", "--replicas", "2.5"], "--replicas must be a whole number, 0 or more (e.g. 3); got '2.5'"),
])
def test_unknown_names_exit_2_with_a_clear_message(fake_plan, capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_a_plan_without_workloads_to_place_exits_1(fake_plan, capsys):
    fake_plan["objects"] = []
    assert main(["--stack", "dev", "--replicas", "1"]) == 1
    assert "has no Deployment with resource claims" in capsys.readouterr().err


def test_the_dev_stack_plan_reproduces_seed_000(capsys):
    """The real offline plan of Pulumi.dev.yaml: seed 000's outcome, from the objects the stack generates."""
    assert main(["--stack", "dev", "--replicas", "3", "--workload", "vllm-gpu", "--json"]) == 0
    replicas = [r for r in json.loads(capsys.readouterr().out)["replicas"] if r["workload"] == "vllm-gpu"]
    assert [(r["status"], r["pool"], r["tensorParallelSize"]) for r in replicas] == [
        ("scheduled", "a100-80gb", 1), ("scheduled", "a100-80gb", 1), ("scheduled", "a100-40gb", 2)]
