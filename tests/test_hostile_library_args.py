"""The library refuses what the stack config refuses: a table of hostile arguments per component.

Each row starts from the arguments the stack builds for a valid config (so a new component joins by
adding its builder) and changes one or more arguments; the component's ``check`` must name each
bad argument, and constructing the component must raise ComponentArgsError, never a TypeError.
"""

from __future__ import annotations

import copy

import pulumi
import pytest
from gpu_fungibility.errors import ComponentArgsError

from offline_plan.run import run_program
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config
from tests.test_config import GKE

CFG = parse_stack_config(copy.deepcopy(GKE))

BUILDERS = {
    "gke-pool": lambda: arguments.gke_pool(CFG, "a100-80gb"),
    "workload": lambda: arguments.workload(CFG, "vllm"),
    "claims": lambda: arguments.dra_claims(CFG),
}


class AsOutput:
    """A value the test hands over as a ``pulumi.Output``. Outputs are made inside the test, never at import:
    one made at collection would belong to no program, and the next program run would wait for it forever."""

    def __init__(self, value):
        self.value = value


def _set(args: dict, path: str, value) -> None:
    if isinstance(value, AsOutput):
        value = pulumi.Output.from_input(value.value)
    keys = path.split(".")
    for key in keys[:-1]:
        args = args.setdefault(key, {})
    args[keys[-1]] = value


# (id, component, {argument path: value}, [(argument path reported, words)])
HOSTILE_ARGS = [
    ("negative-disk", "gke-pool", {"disk_size_gb": -5}, [("disk_size_gb", "below 50")]),
    ("bad-pool-name", "gke-pool", {"node_pool_name": "Bad_Pool"}, [("node_pool_name", "not a GKE node pool name")]),
    ("pool-name-41", "gke-pool", {"node_pool_name": "p" * 41}, [("node_pool_name", "not a GKE node pool name")]),
    ("zero-accelerators", "gke-pool", {"accelerator_count": 0}, [("accelerator_count", "below 1")]),
    ("labels-output", "gke-pool", {"labels": AsOutput({"a": "b"})}, [("labels", "plain value")]),
    ("autoscaling-output", "gke-pool", {"autoscaling": AsOutput({"min_nodes": 1})},
     [("autoscaling", "plain value")]),
    ("type-and-rule-errors", "gke-pool",
     {"disk_size_gb": "big", "spot": "yes", "labels": {"team name": "x"}, "autoscaling": {"min_nodes": 3, "max_nodes": 1}},
     [("disk_size_gb", "whole number"), ("spot", "true or false"), ("labels.team name", "not a valid key"),
      ("autoscaling.max_nodes", "below the minimum")]),
    ("negative-replicas", "workload", {"replicas": -3}, [("replicas", "below 0")]),
    ("port-70000", "workload", {"port": 70000}, [("port", "not a port")]),
    ("service-port-0", "workload", {"service.port": 0}, [("service.port", "not a port")]),
    ("gpu-memory-5", "workload", {"gpu_memory_utilization": 5.0}, [("gpu_memory_utilization", "at most 1")]),
    ("gpu-memory-0", "workload", {"gpu_memory_utilization": 0}, [("gpu_memory_utilization", "above 0")]),
    ("max-model-len-negative", "workload", {"max_model_len": -1}, [("max_model_len", "below 1")]),
    ("namespace-not-a-label", "workload", {"namespace": "Team A"}, [("namespace", "not a namespace name")]),
    ("node-selector-output", "workload", {"node_selector": AsOutput({"a": "b"})},
     [("node_selector", "plain value")]),
    ("exactly-64", "claims", {"claim_templates.vllm": {"namespace": "inference", "exactly": {
        "accelerator_type": "nvidia-a100-80gb", "count": 64}}}, [("claim_templates.vllm.exactly.count", "at most 32")]),
    ("device-class-memory-0", "claims", {"device_classes.big": {"min_memory_gi": 0}},
     [("device_classes.big.min_memory_gi", "below 1")]),
]


def _in_program(work):
    """Run ``work()`` inside a program run under mocks and return what it returned (or raise what it raised).

    Outputs exist only inside a program: one made outside would hold the next program run forever.
    """
    result = []
    run_program(copy.deepcopy(GKE), compose_fn=lambda _loaded: result.append(work()))
    return result[0]


def _hostile_args(component: str, changes: dict):
    planned = BUILDERS[component]()
    args = copy.deepcopy(dict(planned.args))
    for path, value in changes.items():
        _set(args, path, value)
    return planned, args


@pytest.mark.parametrize(("case", "component", "changes", "expected"), HOSTILE_ARGS, ids=[r[0] for r in HOSTILE_ARGS])
def test_the_component_check_names_each_bad_argument(case, component, changes, expected):
    def check():
        planned, args = _hostile_args(component, changes)
        return planned.component.check(planned.name, args)

    found = _in_program(check)
    for path, words in expected:
        assert any(p == path and words in m for p, m in found), (path, words, found)


@pytest.mark.parametrize("case", ["labels-output", "negative-disk", "port-70000", "exactly-64"])
def test_constructing_is_a_component_args_error(case):
    _, component, changes, expected = next(r for r in HOSTILE_ARGS if r[0] == case)

    def build():
        planned, args = _hostile_args(component, changes)
        planned.component(planned.name, args)

    with pytest.raises(ComponentArgsError) as caught:
        _in_program(build)
    assert expected[0][0] in str(caught.value)


# The stack config reports the same problems with its key paths, all in one run.
CONFIG_CASES = [
    ("nodePools/a100-80gb/diskSizeGb", -5, "nodePools.a100-80gb.diskSizeGb", "below 50"),
    ("workloads/vllm/replicas", -3, "workloads.vllm.replicas", "below 0"),
    ("workloads/vllm/port", 70000, "workloads.vllm.port", "not a port"),
    ("workloads/vllm/gpuMemoryUtilization", 5.0, "workloads.vllm.gpuMemoryUtilization", "at most 1"),
    ("workloads/vllm/maxModelLen", -1, "workloads.vllm.maxModelLen", "below 1"),
    ("workloads/vllm/service", {"port": 0}, "workloads.vllm.service.port", "not a port"),
]


def _config_issues(changes) -> list[tuple[str, str]]:
    from tests.test_config import _set as set_config

    raw = copy.deepcopy(GKE)
    for path, value in changes:
        set_config(raw, path, value)
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    return caught.value.issues


@pytest.mark.parametrize(("path", "value", "key", "words"), CONFIG_CASES, ids=[c[2] for c in CONFIG_CASES])
def test_the_config_reports_the_library_rule_with_its_key_path(path, value, key, words):
    issues = _config_issues([(path, value)])
    assert any(k == key and words in m for k, m in issues), issues


def test_schema_errors_do_not_hide_label_taint_and_range_errors():
    issues = _config_issues([
        ("cluster/name", "GPU_cluster"),                                   # schema
        ("nodePools/a100-40gb/autoscaling/max", "two"),                    # schema
        ("nodePools/a100-80gb/labels", {"team name": "ml"}),               # the pool component's
        ("nodePools/a100-80gb/taints", [{"key": "Example.COM/x"}]),        # the pool component's
        ("workloads/vllm/replicas", -3),                                   # the workload component's
    ])
    paths = {p for p, _ in issues}
    assert {"cluster.name", "nodePools.a100-40gb.autoscaling.max", "nodePools.a100-80gb.labels.team name",
            "nodePools.a100-80gb.taints[0]", "workloads.vllm.replicas"} <= paths, issues
    assert not any("stand-in" in m for _, m in issues)
