"""The rehearsal's cluster objects: what the nodes, slices and plugin DaemonSets carry, from the library's models."""

from __future__ import annotations

import pytest
from gpu_fungibility import devices, sizing
from gpu_fungibility.node_selection import NodeTaint, PodPlacement, evaluate

from rehearse import cluster, scenario


@pytest.fixture(scope="module")
def dev():
    return scenario.load("dev")


@pytest.fixture(scope="module")
def eks_dev():
    return scenario.load("eks-dev")


def _placement(plugin: cluster.Plugin) -> PodPlacement:
    spec = plugin.daemonset["spec"]["template"]["spec"]
    return PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"), spec.get("tolerations") or [])


def _runs(plugin: cluster.Plugin, node: cluster.PlannedNode) -> bool:
    taints = [NodeTaint(t["key"], t.get("value", ""), t["effect"]) for t in node.node["spec"]["taints"]]
    return evaluate(_placement(plugin), node.node["metadata"]["labels"], taints).runs


def test_the_minor_comes_from_the_stack_config(dev):
    assert dev.minor == dev.cfg.cluster.minor_version
    assert dev.minor.startswith("1.")


def test_a_node_carries_the_simulators_labels_taints_and_the_capacity_model(dev):
    node = dev.nodes().node("a100-80gb", 0)
    sim = node.sim
    assert node.name == sim.name == "gke-a100-80gb-0"
    assert node.node["metadata"]["labels"] == sim.labels
    assert [(t["key"], t.get("value", ""), t["effect"]) for t in node.node["spec"]["taints"]] == [
        (t.key, t.value, t.effect) for t in sim.taints]
    room = sizing.node_room("gke", sim.machine, "gpu", True)
    assert node.node["status"]["allocatable"]["cpu"] == f"{room.allocatable[0]}m"
    assert node.node["status"]["capacity"]["memory"] == f"{room.capacity[1]}Mi"
    assert {"type": "Ready", "status": "True"}.items() <= node.node["status"]["conditions"][0].items()


def test_the_slice_holds_exactly_what_the_driver_publishes(dev):
    node = dev.nodes().node("a100-40gb", 1)
    pool = dev.cfg.node_pools["a100-40gb"]
    driver, entries = devices.published(dev.cfg.cluster.name, node.name, pool.accelerator.type, pool.accelerator.count)
    [found] = node.resource_slices
    spec = found["spec"]
    assert (spec["driver"], spec["nodeName"], spec["devices"]) == (driver, node.name, entries)
    assert spec["pool"] == {"name": node.name, "generation": 1, "resourceSliceCount": 1}


def test_each_plugin_daemonset_carries_the_chart_models_placement(dev, eks_dev):
    for s in (dev, eks_dev):
        for plugin in s.plugins:
            release = next((r for r in s.releases if r.label == plugin.source), None)
            if release is None:
                continue
            want = release.plugin_placement()
            got = _placement(plugin)
            assert got.node_selector == dict(want.node_selector)
            assert (got.affinity or None) == (want.affinity or None)
            assert got.tolerations == list(want.tolerations)


def test_gke_runs_its_default_device_plugin_only_where_the_opt_out_label_is_missing(dev):
    plugin = dev.plugin(cluster.GKE_DEVICE_PLUGIN)
    dra_node = dev.nodes().node("a100-80gb", 0)
    assert not _runs(plugin, dra_node)
    labels = dict(dra_node.node["metadata"]["labels"])
    del labels["gke-no-default-nvidia-gpu-device-plugin"]
    dra_node.node["metadata"]["labels"] = labels
    assert _runs(plugin, dra_node)


def test_the_device_plugin_runs_only_on_the_device_plugin_pool_of_eks_dev(eks_dev):
    plugin = eks_dev.plugin(cluster.DEVICE_PLUGIN)
    dra = eks_dev.plugin(cluster.NVIDIA_DRA)
    for pool, spec in eks_dev.cfg.node_pools.items():
        node = eks_dev.nodes().node(pool, 0)
        assert _runs(plugin, node) is (not spec.dra), pool
        assert _runs(dra, node) is spec.dra, pool
        if not spec.dra:
            assert node.node["status"]["allocatable"]["nvidia.com/gpu"] == str(spec.accelerator.count)
            assert node.resource_slices == []


def test_plugin_pods_carry_the_chart_labels_make_verify_reads(dev, eks_dev):
    from verify.checks import DEVICE_PLUGIN, NVIDIA_DRA, TPU_DRA, plugin_kind
    from verify.snapshot import Pod

    wanted = {cluster.NVIDIA_DRA: NVIDIA_DRA, cluster.TPU_DRA: TPU_DRA, cluster.DEVICE_PLUGIN: DEVICE_PLUGIN,
              cluster.GKE_DEVICE_PLUGIN: DEVICE_PLUGIN}
    for s in (dev, eks_dev):
        for plugin in s.plugins:
            meta = plugin.daemonset["metadata"]
            labels = plugin.daemonset["spec"]["template"]["metadata"]["labels"]
            pod = Pod(meta["namespace"], "p", "n", "Running", labels, ("DaemonSet", meta["name"]), (0, 0), {}, {})
            assert plugin_kind(pod) == wanted[plugin.kind], plugin.ref


def test_the_compute_class_gets_a_minimal_crd_and_the_secret_a_placeholder(dev):
    crds = cluster.custom_resource_definitions(dev.objects())
    assert [c["metadata"]["name"] for c in crds] == ["computeclasses.cloud.google.com"]
    schema = crds[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    secret = next(m.obj for m in dev.manifests if m.obj["kind"] == "Secret")
    applied, note = cluster.prepared(secret)
    assert "[secret]" not in str(applied) and "placeholder" in note
    assert "[secret]" in str(secret)  # the plan's object is left as it is


def test_driver_device_classes_are_the_charts(dev):
    names = [c["metadata"]["name"] for c in cluster.driver_device_classes(dev.releases)]
    assert {"gpu.nvidia.com", "mig.nvidia.com", "tpu.google.com"} <= set(names)
