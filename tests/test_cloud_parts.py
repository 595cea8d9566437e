"""A cloud registered at runtime brings its own share of the offline plan, the plan diff and make verify; a cloud
without one still plans (its resources echo their inputs) and diffs (its changes are updates with a note)."""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest
from gpu_fungibility import clouds
from gpu_fungibility.errors import UnknownCloudError

from offline_plan import before_deploy, mocks
from plan_diff import impact, rules
from plan_diff.properties import parse_path

CLUSTER = "nimbus:k8s:Cluster"
POOL = "nimbus:k8s:Pool"


class Nimbus(clouds.CloudProfile):
    name, title = "nimbus", "Nimbus"
    parts = {"offline_plan": "tests.nimbus_offline_plan", "plan_diff": "tests.nimbus_plan_diff"}


class Bare(clouds.CloudProfile):
    name, title = "bare", "Bare"


def _offline_part() -> types.ModuleType:
    part = types.ModuleType("tests.nimbus_offline_plan")
    part.OUTPUTS_BY_TYPE = {CLUSTER: lambda name, inputs: {"endpoint": f"https://{name}.nimbus.example"}}
    part.CALL_RESULTS = {"nimbus:index:whoami": {"tenant": "t-1"}}
    part.account = lambda cfg, provider: before_deploy.Item("ok", "tenant", f"tenant t-1, {cfg.cluster.location}")
    part.deletion = lambda cfg: before_deploy.Item("ok", "deletion protection", "the tenant's own lock")
    return part


def _diff_part() -> types.ModuleType:
    part = types.ModuleType("tests.nimbus_plan_diff")
    part.REPLACEMENT_RULES = {POOL: rules.rules_from("nimbus docs, read in its 2026 form", "shape")}
    part.CLUSTERS, part.POOLS = {CLUSTER: "Nimbus cluster"}, {POOL: "pool"}
    part.accelerator = lambda type_, inputs: "GPU" if inputs.get("gpus") else None
    return part


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(sys.modules, "tests.nimbus_offline_plan", _offline_part())
    monkeypatch.setitem(sys.modules, "tests.nimbus_plan_diff", _diff_part())
    for profile in (Nimbus(), Bare()):
        monkeypatch.setitem(clouds.PROFILES, profile.name, profile)
    yield


def _cfg(cloud: str) -> SimpleNamespace:
    access = SimpleNamespace(public_endpoint=False, authorized_networks=[], runner_cidrs=[], dns_endpoint=False)
    cluster = SimpleNamespace(cloud=cloud, location="north-1", control_plane=access, deletion_protection=True)
    return SimpleNamespace(cluster=cluster, node_pools={})


def test_the_mocks_read_a_new_clouds_outputs_from_its_own_module(registered):
    assert mocks.computed_outputs(CLUSTER, "c", {"size": 1}) == {"size": 1, "endpoint": "https://c.nimbus.example"}
    assert mocks.call_results()["nimbus:index:whoami"] == {"tenant": "t-1"}
    assert mocks.computed_outputs("nimbus:k8s:Unheard", "u", {"a": 1}) == {"a": 1}, "an unknown type echoes"
    assert "gcp:container/cluster:Cluster" in mocks.outputs_by_type(), "the shipped clouds stay"


def test_before_deploy_asks_the_stacks_cloud_and_falls_back_for_a_cloud_without_a_module(registered):
    own = before_deploy.items(SimpleNamespace(config=_cfg("nimbus")))
    assert (own[0].topic, own[0].text) == ("tenant", "tenant t-1, north-1")
    assert own[-1].text == "the tenant's own lock"
    bare = before_deploy.items(SimpleNamespace(config=_cfg("bare")))
    assert bare[0].text == "the account of your credentials, region north-1"
    assert bare[-1].text.startswith("on: `pulumi destroy` cannot delete the cluster")


def test_the_plan_diff_reads_a_new_clouds_rules_and_nouns(registered):
    [rule] = rules.rules_for(POOL, {})
    assert rules.replacing_rule([rule], parse_path("shape"), {"shape": "a"}, {"shape": "b"}) is rule
    assert impact.clusters()[CLUSTER] == "Nimbus cluster" and impact.pools()[POOL] == "pool"
    assert impact.accelerator(POOL, {"gpus": 1}) == "GPU" and impact.accelerator(POOL, {}) is None
    assert rules.rules_for("bare:k8s:Cluster", {}) is None


def test_an_unknown_cloud_is_refused():
    with pytest.raises(UnknownCloudError):
        before_deploy.items(SimpleNamespace(config=_cfg("nowhere")))


@pytest.mark.parametrize(("stack", "pool", "machine"), [("dev", "a100-80gb", "a2-ultragpu-1g"),
                                                        ("eks-dev", "a10g-4x", "g5.12xlarge, g5.24xlarge"),
                                                        ("aks-dev", "a100spot", "Standard_NC24ads_A100_v4")])
def test_the_summary_names_each_pools_machine_on_every_cloud(stack, pool, machine):
    """The fallback chart's pool caption names the machine however its cloud's config spells it (the VM size on
    AKS was left blank)."""
    from offline_plan.run import read_stack_file
    from offline_plan.summary import _pool_caption
    from stacks.loader import parse_stack_config

    cfg = parse_stack_config(read_stack_file(stack).namespace_config)
    assert f"<br/>{machine}" in _pool_caption(cfg, pool)


def _pod(namespace: str, labels: dict[str, str]):
    from verify.snapshot import Pod

    return Pod(namespace, "p-1", "n1", "Running", labels, ("DaemonSet", "x"), (0, 0), {}, {})


def test_verify_asks_each_cloud_which_pods_are_its_own_device_plugin(monkeypatch):
    from verify import checks
    from verify.snapshot import Node

    gke_plugin = _pod("kube-system", {"k8s-app": "nvidia-gpu-device-plugin"})
    assert checks.plugin_kind(gke_plugin) == checks.DEVICE_PLUGIN
    assert checks.plugin_kind(_pod("default", {"k8s-app": "nvidia-gpu-device-plugin"})) == ""
    gke_gpu = Node("n1", {"cloud.google.com/gke-accelerator": "nvidia-l4"}, (0, 0), {})
    gke_tpu = Node("n2", {"cloud.google.com/gke-accelerator": "tpu-v5-lite-podslice"}, (0, 0), {})
    assert checks._is_gpu_node(gke_gpu, None) and not checks._is_gpu_node(gke_tpu, None)

    part = types.ModuleType("tests.nimbus_verify")
    part.is_device_plugin = lambda pod: pod.labels.get("nimbus.example/addon") == "gpu-plugin"
    monkeypatch.setitem(sys.modules, "tests.nimbus_verify", part)
    monkeypatch.setattr(Nimbus, "parts", {"verify": "tests.nimbus_verify"})
    monkeypatch.setitem(clouds.PROFILES, "nimbus", Nimbus())
    assert checks.plugin_kind(_pod("kube-system", {"nimbus.example/addon": "gpu-plugin"})) == checks.DEVICE_PLUGIN


def test_the_rehearsal_stands_in_for_what_a_new_cloud_runs_and_serves(monkeypatch):
    from rehearse import cluster

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "shapes.nimbus.example"},
           "spec": {"group": "nimbus.example", "names": {"kind": "Shape"}}}
    plugin = cluster.Plugin(cluster.DEVICE_PLUGIN, "Nimbus", cluster.daemonset(
        "kube-system", "nimbus-gpu", {"app": "nimbus-gpu"}, cluster.DEVICE_PLUGIN, {}, (10, 10), None))
    part = types.ModuleType("tests.nimbus_rehearse")
    part.cloud_plugins = lambda: [plugin]
    part.custom_resource_definitions = lambda: [crd]
    part.CRD_NOTE = "Nimbus's Shape is a stand-in"
    monkeypatch.setitem(sys.modules, "tests.nimbus_rehearse", part)
    monkeypatch.setattr(Nimbus, "parts", {"rehearse": "tests.nimbus_rehearse"})
    monkeypatch.setitem(clouds.PROFILES, "nimbus", Nimbus())
    assert cluster.plugin_daemonsets("nimbus", []) == [plugin]
    assert cluster.custom_resources([{"apiVersion": "nimbus.example/v1", "kind": "Shape"}]) == (
        [crd], ["Nimbus's Shape is a stand-in"])
    assert cluster.custom_resources([{"apiVersion": "v1", "kind": "ConfigMap"}]) == ([], [])
    assert [p.kind for p in cluster.plugin_daemonsets("eks", [])] == [], "a cloud with no share runs nothing"
