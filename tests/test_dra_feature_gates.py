"""DRA features on by default from Kubernetes 1.36: partitionable devices (shared counters) and device taints.

The gate table (gpu_fungibility.versions.DRA_FEATURE_GATES_ON_FROM) is read from k8s.io/kubernetes at the pinned
patches; the allocator (simulator/dra_features.py) follows k8s.io/dynamic-resource-allocation v0.36.3's
``allocateDevice``; the reduced cases are held against kube-scheduler v1.36.3's and v1.35.4's recorded answers.
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from gpu_fungibility.versions import dra_feature_enabled

from rehearse import differential, reduced, simside
from simulator.allocator import Allocator
from simulator.cluster import SimDevice, SimNode
from simulator.dra_features import DraFeatures, tolerates
from simulator.workloads import claim_spec, device_classes

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "differential"
PINNED = json.loads((ROOT / "rehearse" / "harness" / "versions.json").read_text())
DRIVER = "dev.example.com"


@pytest.mark.parametrize("minor, on", [("1.34", False), ("1.35", False), ("v1.35.4", False), ("1.36", True),
                                       ("v1.36.3", True), ((1, 37), True), (None, True)])
def test_partitionable_devices_and_device_taints_are_on_from_1_36(minor, on):
    assert dra_feature_enabled("DRAPartitionableDevices", minor) is on
    assert dra_feature_enabled("DRADeviceTaints", minor) is on
    assert dra_feature_enabled("DRAPrioritizedList", minor) is True


# ---- the allocator ----


def _device(name: str, **extra) -> dict:
    return {"name": name, "attributes": {"index": {"int": int(name.rsplit("-", 1)[1])}}, **extra}


def _node(entries: list[dict]) -> SimNode:
    return SimNode("n0", "p", {}, [], [SimDevice.build("n0", DRIVER, e) for e in entries])


def _slices(entries: list[dict], counter_sets: dict[str, str]) -> list[dict]:
    pool = {"name": "n0", "generation": 1, "resourceSliceCount": 2}
    return [{"spec": {"driver": DRIVER, "nodeName": "n0", "pool": pool, "sharedCounters": [
                {"name": n, "counters": {"memory": {"value": v}}} for n, v in counter_sets.items()]}},
            {"spec": {"driver": DRIVER, "nodeName": "n0", "pool": pool, "devices": entries}}]


def _allocate(node: SimNode, requests: list[dict], features: DraFeatures, in_use: frozenset[str] = frozenset()):
    classes = device_classes([{"kind": "DeviceClass", "metadata": {"name": "dev"},
                               "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}])[0]
    found = Allocator(classes, features=features).allocate(
        [claim_spec("c0", "template d/t", False, {"requests": requests})], node, in_use)
    return None if found is None else sorted(p.device.name for p in found)


def _consumes(counter_set: str, value: str) -> dict:
    return {"consumesCounters": [{"counterSet": counter_set, "counters": {"memory": {"value": value}}}]}


PARTS = [_device("part-0", **_consumes("gpu-0", "30Gi")), _device("part-1", **_consumes("gpu-0", "30Gi")),
         _device("part-2", **_consumes("gpu-0", "10Gi")), _device("part-3", **_consumes("gpu-1", "30Gi"))]
COUNTERS = {"gpu-0": "40Gi", "gpu-1": "40Gi"}


def test_devices_consuming_one_counter_set_fit_within_it_on_1_36():
    node = _node(PARTS)
    on = DraFeatures.at("1.36", _slices(PARTS, COUNTERS))
    two = [{"name": "r", "exactly": {"deviceClassName": "dev", "count": 2}}]
    # part-0 and part-1 would take 60Gi of gpu-0's 40Gi: the search backtracks to part-0 + part-2 (40Gi)
    assert _allocate(node, two, on) == ["part-0", "part-2"]
    three = [{"name": "r", "exactly": {"deviceClassName": "dev", "count": 3}}]
    assert _allocate(node, three, on) == ["part-0", "part-2", "part-3"]
    assert _allocate(node, [{"name": "r", "exactly": {"deviceClassName": "dev", "count": 4}}], on) is None
    # a device in use consumes its counters too: with part-0 taken, part-1 (30Gi) no longer fits beside it
    assert _allocate(node, two, on, frozenset({"n0/part-0"})) == ["part-2", "part-3"]
    # an All request takes every matching device: over the counters, it fails
    assert _allocate(node, [{"name": "r", "exactly": {"deviceClassName": "dev", "allocationMode": "All"}}], on) is None


def test_counters_are_ignored_where_the_gate_is_off():
    off = DraFeatures.at("1.35", _slices(PARTS, COUNTERS))
    assert _allocate(_node(PARTS), [{"name": "r", "exactly": {"deviceClassName": "dev", "count": 4}}], off) \
        == ["part-0", "part-1", "part-2", "part-3"]


TAINTED = [_device("gpu-0", taints=[{"key": "example.com/unhealthy", "value": "true", "effect": "NoSchedule"}]),
           _device("gpu-1", taints=[{"key": "example.com/maintenance", "effect": "NoExecute"}]),
           _device("gpu-2", taints=[{"key": "example.com/note", "effect": "None"}])]


@pytest.mark.parametrize("tolerations, expected", [
    ([], ["gpu-2"]),  # effect None never keeps a device out
    ([{"key": "example.com/unhealthy", "operator": "Equal", "value": "false"}], ["gpu-2"]),
    ([{"key": "example.com/unhealthy", "value": "true"}], ["gpu-0", "gpu-2"]),  # empty operator: Equal
    ([{"key": "example.com/unhealthy", "operator": "Exists", "effect": "NoExecute"}], ["gpu-2"]),
    ([{"key": "example.com/maintenance", "operator": "Exists"}], ["gpu-1", "gpu-2"]),
    ([{"operator": "Exists", "effect": "NoSchedule"}], ["gpu-0", "gpu-2"]),
    ([{"operator": "Exists"}], ["gpu-0", "gpu-1", "gpu-2"]),
    ([{"key": "example.com/unhealthy", "operator": "Gt", "value": "1"}], ["gpu-2"]),
])
def test_a_tainted_device_needs_the_requests_toleration_on_1_36(tolerations, expected):
    request = [{"name": "r", "exactly": {"deviceClassName": "dev", "allocationMode": "All",
                                         "tolerations": tolerations}}]
    node = _node(TAINTED)
    if expected == ["gpu-0", "gpu-1", "gpu-2"]:
        assert _allocate(node, request, DraFeatures.at("1.36")) == expected
    else:  # an All request meets a device it may not take: the alternative fails (a plain "no", no error)
        assert _allocate(node, request, DraFeatures.at("1.36")) is None
    found = {d for d in expected}
    for name in ("gpu-0", "gpu-1", "gpu-2"):
        one = [{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "dev", "tolerations": tolerations,
                                                 "selectors": [{"cel": {"expression":
                                                     f"device.attributes['{DRIVER}'].index == {name[-1]}"}}]}]}]
        assert (_allocate(node, one, DraFeatures.at("1.36")) == [name]) is (name in found), name
        assert _allocate(node, one, DraFeatures.at("1.35")) == [name]  # taints and tolerations dropped


def test_tolerates_is_resourceclaims_tolerates_taint():
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    assert tolerates({"key": "k", "value": "v"}, taint)
    assert tolerates({"key": "k", "operator": "Exists"}, taint)
    assert not tolerates({"key": "k", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert not tolerates({"key": "other", "operator": "Exists"}, taint)
    assert not tolerates({"key": "k", "value": "w"}, taint)


# ---- held against kube-scheduler ----


def _recorded(key: str, minor: str) -> dict:
    return json.loads((FIXTURES / f"reduced-{key.replace('_', '-')}-v{minor}.json").read_text())


def _outcomes(case: dict) -> Counter:
    pools = differential.pool_of_nodes(case["document"])
    return Counter((p["group"].split("-", 1)[1], pools.get(p["node"]), tuple(d for _, _, d in p["picks"]))
                   for p in case["observed"]["pods"])


@pytest.mark.parametrize("minor", ["1.35", "1.36"])
@pytest.mark.parametrize("key", list(reduced.GATED_CASES))
def test_the_simulator_gives_kube_schedulers_answer_per_minor(key, minor):
    case = _recorded(key, minor)
    assert case["kubernetes"] == PINNED[minor] and not case["applyErrors"]
    verdict = differential.compare(case["document"], case["observed"],
                                   simside.simulate(case["document"], kubernetes=case["kubernetes"]))
    assert verdict.agrees and verdict.determinate, verdict.detail


def test_kube_scheduler_1_36_honours_shared_counters_and_1_35_does_not():
    assert _outcomes(_recorded("partitionable", "1.36")) == Counter({
        ("g0", "p0", ("gpu-0-part-0",)): 1, ("g0", "p0", ("gpu-1-part-0",)): 1, ("g0", None, ()): 1})
    assert _outcomes(_recorded("partitionable", "1.35")) == Counter({
        ("g0", "p0", ("gpu-0-part-0",)): 1, ("g0", "p0", ("gpu-0-part-1",)): 1, ("g0", "p0", ("gpu-1-part-0",)): 1})


def test_kube_scheduler_1_36_honours_device_taints_and_1_35_does_not():
    assert _outcomes(_recorded("device_taints", "1.36")) == Counter({
        ("g0", None, ()): 1, ("g1", None, ()): 1, ("g2", "p0", ("gpu-0",)): 1, ("g3", "p0", ("gpu-1",)): 1})
    assert _outcomes(_recorded("device_taints", "1.35")) == Counter({
        ("g0", "p0", ("gpu-0",)): 1, ("g1", "p0", ("gpu-1",)): 1, ("g2", None, ()): 1, ("g3", None, ()): 1})


def test_kube_scheduler_1_36_keeps_dynamic_mig_slices_apart_and_1_35_does_not():
    # one H100 as the NVIDIA driver publishes it with DynamicMIG (gpu_fungibility.devices), accepted by both API
    # servers: two 3g.40gb hold all eight memory slices, so 1.36 refuses the 4g.40gb that 1.35 hands out
    assert _outcomes(_recorded("dynamic_mig", "1.36")) == Counter({
        ("g0", "p0", ("gpu-0-mig-3g40gb-9-0",)): 1, ("g0", "p0", ("gpu-0-mig-3g40gb-9-4",)): 1, ("g0", None, ()): 1})
    assert _outcomes(_recorded("dynamic_mig", "1.35")) == Counter({
        ("g0", "p0", ("gpu-0-mig-3g40gb-9-0",)): 1, ("g0", "p0", ("gpu-0-mig-3g40gb-9-4",)): 1,
        ("g0", "p0", ("gpu-0-mig-4g40gb-5-0",)): 1})


def test_every_gated_case_is_recorded_on_both_minors():
    assert {p.name for p in FIXTURES.glob("reduced-*-v1.3*.json")} == {
        f"reduced-{k.replace('_', '-')}-v{m}.json" for k in reduced.GATED_CASES for m in ("1.35", "1.36")}


# ---- the config: a claim's device tolerations ----


def _stack(**workload) -> dict:
    from tests.test_claims import gke_config
    return gke_config(["a100-80gb", "a100-40gb"], **workload)


def test_device_tolerations_reach_every_request_of_the_claim():
    from tests.in_cluster_harness import run_in_cluster
    from tests.test_claims import alternatives, template_requests
    tolerations = [{"key": "example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule"}]
    run = run_in_cluster(_stack(deviceTolerations=tolerations))
    for alt in alternatives(run, "serve"):
        assert alt["tolerations"] == tolerations, alt["name"]
    cfg = _stack()
    cfg["workloads"] = {"pinned": {"pool": "a100-40gb", "model": "m",
                                   "deviceTolerations": [{"key": "k", "value": "v"}]}}
    (request,) = template_requests(run_in_cluster(cfg), "pinned")
    assert request["exactly"]["tolerations"] == [{"key": "k", "operator": "Equal", "value": "v"}]


def test_without_device_tolerations_no_request_carries_the_field():
    from tests.in_cluster_harness import run_in_cluster
    from tests.test_claims import alternatives
    assert all("tolerations" not in alt for alt in alternatives(run_in_cluster(_stack()), "serve"))


@pytest.mark.parametrize("toleration, path", [
    ({"key": "k", "operator": "Exists", "value": "v"}, "workloads.serve.deviceTolerations"),
    ({"key": "k", "operator": "Gt"}, "workloads.serve.deviceTolerations[0].operator"),
    ({"key": "k", "effect": "None"}, "workloads.serve.deviceTolerations[0].effect"),
])
def test_what_the_api_server_refuses_in_a_toleration_is_a_config_error(toleration, path):
    from stacks.loader import ConfigError, parse_stack_config
    with pytest.raises(ConfigError) as err:
        parse_stack_config(_stack(deviceTolerations=[toleration]))
    assert any(p.startswith(path) for p, _ in err.value.issues), err.value.issues


def test_a_toleration_without_a_key_matches_every_key_with_its_value():
    """The API server accepts an empty key with ``Equal`` (unlike a pod's toleration), and ToleratesTaint then
    compares only the value."""
    from stacks.loader import parse_stack_config
    parse_stack_config(_stack(deviceTolerations=[{"operator": "Equal", "value": "v"}]))
    assert tolerates({"operator": "Equal", "value": "v"}, {"key": "any", "value": "v", "effect": "NoSchedule"})
    assert not tolerates({"operator": "Equal", "value": "v"}, {"key": "any", "value": "w", "effect": "NoSchedule"})


def test_the_simulator_reads_the_claims_tolerations():
    from simulator.workloads import claim_spec as sim_claim
    spec = sim_claim("c0", "template d/t", False, {"requests": [{"name": "r", "firstAvailable": [
        {"name": "s", "deviceClassName": "dev", "tolerations": [{"key": "k", "operator": "Exists"}]}]}]})
    (alternative,) = spec.requests[0].alternatives
    assert DraFeatures.at("1.36").taint_blocks({"taints": [{"key": "k", "effect": "NoExecute"}]},
                                               alternative.tolerations) is False
    assert DraFeatures.at("1.36").taint_blocks({"taints": [{"key": "j", "effect": "NoExecute"}]},
                                               alternative.tolerations) is True


def test_make_verify_counts_a_tainted_device_only_for_a_request_that_tolerates_it():
    """A live slice carries ``taints`` only where DRADeviceTaints is on (1.36): verify then judges a claim
    alternative as the 1.36 allocator would."""
    from verify.checks import _fits
    entries = [(DRIVER, e) for e in TAINTED]
    selectors = [f"device.driver == '{DRIVER}'"]
    assert _fits(selectors, 1, entries) and not _fits(selectors, 2, entries)
    assert _fits(selectors, 3, entries, [{"operator": "Exists"}])
    assert _fits(selectors, 2, entries, [{"key": "example.com/maintenance", "operator": "Exists"}])
