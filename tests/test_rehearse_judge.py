"""The rehearsal's judgement: reading what the real controllers wrote, and comparing it with the simulator."""

from __future__ import annotations

from types import SimpleNamespace

from rehearse import cluster, judge
from rehearse.judge import FAIL, OK, Observed
from simulator.results import Outcome, ReplicaPlacement
from verify.placement import advice


def _pod(name: str, node: str | None = None, claims: dict[str, str] | None = None, message: str | None = None,
         owner: tuple[str, str] = ("ReplicaSet", "vllm-rs"), namespace: str = "inference") -> dict:
    pod = {"metadata": {"namespace": namespace, "name": name,
                        "ownerReferences": [{"kind": owner[0], "name": owner[1], "controller": True}]},
           "spec": {"resourceClaims": [{"name": k} for k in (claims or {})]}, "status": {}}
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"]["resourceClaimStatuses"] = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    if message:
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                        "message": message}]
    return pod


def _claim(name: str, results: list[tuple[str, str]]) -> dict:
    return {"metadata": {"namespace": "inference", "name": name},
            "status": {"allocation": {"devices": {"results": [
                {"request": r, "driver": "gpu.nvidia.com", "pool": "n", "device": d} for r, d in results]}}}}


def test_a_bound_pod_reads_its_chosen_alternative_and_devices_from_its_claim():
    pod = _pod("vllm-1", "gke-a100-40gb-0", {"gpu": "vllm-1-gpu-x"})
    claims = {("inference", "vllm-1-gpu-x"): _claim("vllm-1-gpu-x", [("gpu/a100-40gb", "gpu-0"),
                                                                        ("gpu/a100-40gb", "gpu-1")])}
    o = judge.observe("vllm-gpu", 1, pod, claims, {"gke-a100-40gb-0": "a100-40gb"})
    assert (o.status, o.pool, o.alternatives, o.devices) == (
        "scheduled", "a100-40gb", ("gpu/a100-40gb",), ("gpu-0", "gpu-1"))


def test_a_pending_pod_keeps_the_schedulers_message():
    o = judge.observe("w", 1, _pod("p", message="0/3 nodes are available: 3 cannot allocate all claims."), {}, {})
    assert o.status == "pending" and "cannot allocate all claims" in o.message


def _predicted(status="scheduled", pool="a100-80gb", alternatives=("gpu/a100-80gb",), devices=("gpu-0",),
               outcomes=(), node="gke-a100-80gb-0", reason=None):
    return ReplicaPlacement("vllm-gpu", 1, status, pool, node, devices, 1, reason, alternatives, outcomes)


def _observed(pool="a100-80gb", alternatives=("gpu/a100-80gb",), devices=("gpu-0",), node="gke-a100-80gb-0",
              status="scheduled", message=None):
    return Observed("vllm-gpu", 1, "p", status, node if status == "scheduled" else None, pool, alternatives,
                    devices, message)


def test_the_same_pool_and_alternative_agree_even_on_another_node():
    c = judge.compare(_observed(node="gke-a100-80gb-1"), _predicted())
    assert c.agrees and "interchangeable" in c.why


def test_another_pool_or_alternative_than_a_determined_prediction_disagrees():
    c = judge.compare(_observed(pool="a100-40gb", alternatives=("gpu/a100-40gb",), devices=("gpu-0", "gpu-1")),
                      _predicted())
    assert not c.agrees and "pool a100-40gb" in c.why
    c = judge.compare(_observed(alternatives=("gpu/other",)), _predicted())
    assert not c.agrees and "alternative" in c.why


def test_an_undetermined_prediction_accepts_any_declared_outcome_and_nothing_else():
    outcomes = (Outcome("scheduled", "l40s", alternatives=("gpu/l40s",), devices=("gpu-0",)),
                Outcome("scheduled", "a10g-4x", alternatives=("gpu/a10g-4x",), devices=("gpu-0",) * 4))
    predicted = _predicted(status="undetermined", pool=None, alternatives=(), devices=(), outcomes=outcomes, node=None)
    assert judge.compare(_observed("a10g-4x", ("gpu/a10g-4x",), ("a", "b", "c", "d")), predicted).agrees
    assert not judge.compare(_observed("t4", ("gpu/t4",), ("a",)), predicted).agrees


def test_pending_against_scheduled_disagrees_and_pending_against_pending_agrees():
    pending = _observed(status="pending", message="0/2 nodes are available: 2 Insufficient cpu.")
    assert not judge.compare(pending, _predicted()).agrees
    assert judge.compare(pending, _predicted(status="pending", pool=None, reason="insufficient cpu")).agrees


def _planned(pool: str, name: str) -> SimpleNamespace:
    return SimpleNamespace(pool=pool, name=name)


def _cfg(**pools) -> SimpleNamespace:
    return SimpleNamespace(node_pools={name: SimpleNamespace(family=family, dra=dra)
                                       for name, (family, dra) in pools.items()})


def test_isolation_fails_a_node_with_both_plugins_and_a_dra_node_without_its_plugin():
    nodes = [_planned("a", "n-a"), _planned("b", "n-b"), _planned("c", "n-c")]
    cfg = _cfg(a=("gpu", True), b=("gpu", True), c=("gpu", False))
    placed = {"n-a": {cluster.NVIDIA_DRA: ["x/dra-a"], cluster.DEVICE_PLUGIN: ["x/dp-a"]},
              "n-c": {cluster.DEVICE_PLUGIN: ["x/dp-c"]}}
    found = judge.isolation(nodes, cfg, placed, [])
    assert [f.severity for f in found] == [FAIL, FAIL, OK]
    assert "together" in found[0].message and "n-a" in found[0].message
    assert "placed no NVIDIA DRA kubelet plugin" in found[1].message


def test_plugin_pods_are_told_apart_by_their_daemonsets_annotation():
    ds = [{"metadata": {"namespace": "kube-system", "name": "dp", "annotations": {cluster.PLUGIN_ANNOTATION:
                                                                                    cluster.GKE_DEVICE_PLUGIN}}},
          {"metadata": {"namespace": "kube-system", "name": "other"}}]
    pods = [_pod("dp-1", "n1", owner=("DaemonSet", "dp"), namespace="kube-system"),
            _pod("dp-2", None, owner=("DaemonSet", "dp"), namespace="kube-system", message="0/1 nodes: taint"),
            _pod("o-1", "n1", owner=("DaemonSet", "other"), namespace="kube-system")]
    placed, unplaced = judge.plugins_by_node(pods, ds)
    assert placed == {"n1": {cluster.GKE_DEVICE_PLUGIN: ["kube-system/dp-1"]}}
    assert len(unplaced) == 1 and "taint" in unplaced[0]


def test_real_messages_are_checked_against_make_verifys_patterns():
    good = _observed(status="pending", message="0/4 nodes are available: 4 cannot allocate all claims.")
    odd = _observed(status="pending", message="0/4 nodes are available: 4 something new.")
    found = judge.message_findings("overcommit", [good, odd], advice)
    assert [f.severity for f in found] == [OK, FAIL]
    assert "mere warning" in found[1].message
