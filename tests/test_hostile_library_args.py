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

from offline_plan.run import read_stack_file, run_program
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config
from tests.test_config import EKS, GKE

CFG = parse_stack_config(copy.deepcopy(GKE))
EKS_CFG = parse_stack_config(copy.deepcopy(EKS))
AKS_RAW = read_stack_file("aks-dev").namespace_config
AKS_CFG = parse_stack_config(copy.deepcopy(AKS_RAW))

BUILDERS = {
    "gke-pool": lambda: arguments.pool(CFG, "a100-80gb"),
    "workload": lambda: arguments.workload(CFG, "vllm"),
    "claims": lambda: arguments.dra_claims(CFG),
    "gke-cluster": lambda: arguments.cloud_arguments(CFG).cluster(CFG),
    "eks-cluster": lambda: arguments.cloud_arguments(EKS_CFG).cluster(EKS_CFG),
    "aks-cluster": lambda: arguments.cloud_arguments(AKS_CFG).cluster(AKS_CFG),
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

# The cluster components: the same rules under each one's own argument names (its system pool is
# ``system_pool`` on GKE and AKS, ``system_node_group`` on EKS; its location ``region`` on EKS).
_CLUSTER_POOL = {"gke-cluster": ("system_pool", "location"), "eks-cluster": ("system_node_group", "region"),
                 "aks-cluster": ("system_pool", "location")}
for _cluster, (_pool, _where) in _CLUSTER_POOL.items():
    HOSTILE_ARGS += [
        (f"{_cluster}-name-underscore", _cluster, {"name": "GPU_cluster"}, [("name", "not a cluster name")]),
        (f"{_cluster}-name-41", _cluster, {"name": "c" * 41}, [("name", "not a cluster name")]),
        (f"{_cluster}-name-trailing-dash", _cluster, {"name": "gpu-"}, [("name", "not a cluster name")]),
        (f"{_cluster}-empty-location", _cluster, {_where: ""}, [(_where, "is empty")]),
        (f"{_cluster}-min-0", _cluster, {f"{_pool}.min_nodes": 0}, [(f"{_pool}.min_nodes", "below 1")]),
        (f"{_cluster}-max-0", _cluster, {f"{_pool}.min_nodes": 1, f"{_pool}.max_nodes": 0},
         [(f"{_pool}.max_nodes", "below 1"), (f"{_pool}.min_nodes", "greater than max_nodes")]),
        (f"{_cluster}-min-above-max", _cluster, {f"{_pool}.min_nodes": 4, f"{_pool}.max_nodes": 2},
         [(f"{_pool}.min_nodes", "greater than max_nodes")]),
        (f"{_cluster}-disk-19", _cluster, {f"{_pool}.disk_size_gb": 19}, [(f"{_pool}.disk_size_gb", "below 20")]),
        (f"{_cluster}-public-without-allow-list", _cluster, {"public_endpoint": True, "authorized_networks": []},
         [("public_endpoint", "needs authorized_networks")]),
        (f"{_cluster}-system-pool-output", _cluster, {_pool: AsOutput({"min_nodes": 1})}, [(_pool, "plain value")]),
    ]
HOSTILE_ARGS += [
    ("gke-cluster-pods-cidr-24", "gke-cluster", {"pods_cidr": "10.4.0.0/24"}, [("pods_cidr", "too small")]),
    ("gke-cluster-services-cidr-garbage", "gke-cluster", {"services_cidr": "10.8.0.1/20"},
     [("services_cidr", "not a CIDR block")]),
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


@pytest.mark.parametrize("case", ["labels-output", "negative-disk", "port-70000", "exactly-64", "gke-cluster-min-0",
                                  "eks-cluster-name-underscore", "aks-cluster-disk-19"])
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
    ("cluster/name", "gpu-", "cluster.name", "not a cluster name"),
    ("cluster/location", "", "cluster.location", "is empty"),
    ("cluster/systemPool", {"min": 0}, "cluster.systemPool.min", "below 1"),
    ("cluster/systemPool", {"min": 1, "max": 0}, "cluster.systemPool.max", "below 1"),
    ("cluster/systemPool", {"min": 3, "max": 2}, "cluster.systemPool.min", "greater than max_nodes"),
    ("cluster/systemPool", {"diskSizeGb": 19}, "cluster.systemPool.diskSizeGb", "below 20"),
    ("cluster/network", {"podsCidr": "10.4.0.0/24"}, "cluster.network.podsCidr", "too small"),
]


def _config_issues(changes, base=GKE) -> list[tuple[str, str]]:
    from tests.test_config import _set as set_config

    raw = copy.deepcopy(base)
    for path, value in changes:
        set_config(raw, path, value)
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    return caught.value.issues


@pytest.mark.parametrize(("path", "value", "key", "words"), CONFIG_CASES,
                         ids=[f"{c[2]}-{c[3]}" for c in CONFIG_CASES])
def test_the_config_reports_the_library_rule_with_its_key_path(path, value, key, words):
    issues = _config_issues([(path, value)])
    assert any(k == key and words in m for k, m in issues), issues


CLUSTER_CONFIG_CASES = [(base, path, value, key, words) for base in ("eks", "aks") for path, value, key, words in [
    ("cluster/name", "GPU_cluster", "cluster.name", "not a cluster name"),
    ("cluster/location", "", "cluster.location", "is empty"),
    ("cluster/systemPool", {"min": 0}, "cluster.systemPool.min", "below 1"),
    ("cluster/systemPool", {"min": 3, "max": 2}, "cluster.systemPool.min", "greater than max_nodes"),
    ("cluster/systemPool", {"diskSizeGb": 19}, "cluster.systemPool.diskSizeGb", "below 20"),
    ("cluster/controlPlane", {"publicEndpoint": True}, "cluster.controlPlane.publicEndpoint",
     "needs authorized_networks"),
]]


@pytest.mark.parametrize(("base", "path", "value", "key", "words"), CLUSTER_CONFIG_CASES,
                         ids=[f"{c[0]}-{c[3]}-{c[4]}" for c in CLUSTER_CONFIG_CASES])
def test_the_eks_and_aks_configs_report_the_cluster_rules_with_their_key_paths(base, path, value, key, words):
    issues = _config_issues([(path, value)], EKS if base == "eks" else AKS_RAW)
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
