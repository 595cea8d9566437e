"""The reduced cases (rehearse/reduced.py), each held against kube-scheduler v1.35.4's recorded answer.

Each fixture tests/fixtures/differential/reduced-<case>.json is one small scenario placed by the real control
plane (``python -m rehearse.reduced --record tests/fixtures/differential``). Here each states what the real
scheduler did, so a re-recording that changes it fails, and the simulator must give exactly that answer.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from rehearse import differential, reduced, simside

FIXTURES = Path(__file__).parent / "fixtures" / "differential"


def recorded(key: str) -> dict:
    return json.loads((FIXTURES / f"reduced-{key.replace('_', '-')}.json").read_text())


def outcomes(case: dict) -> Counter:
    """(group suffix, node's pool or None, devices) per pod of the real answer."""
    pools = differential.pool_of_nodes(case["document"])
    return Counter((p["group"].split("-", 1)[1], pools.get(p["node"]), tuple(d for _, _, d in p["picks"]))
                   for p in case["observed"]["pods"])


@pytest.mark.parametrize("key", list(reduced.CASES))
def test_the_simulator_gives_the_recorded_answer_and_only_it(key):
    case = recorded(key)
    assert case["kubernetes"] == "v1.35.4"
    answer = simside.simulate(case["document"], kubernetes=case["kubernetes"])
    verdict = differential.compare(case["document"], case["observed"], answer)
    assert verdict.agrees and verdict.determinate, verdict.detail


def test_every_case_is_recorded():
    gated = {f"{k.replace('_', '-')}-v{m}" for k in reduced.GATED_CASES for m in ("1.35", "1.36")}
    assert {p.stem.removeprefix("reduced-") for p in FIXTURES.glob("reduced-*.json")} - gated == {
        k.replace("_", "-") for k in reduced.CASES}  # the gated ones: tests/test_dra_feature_gates.py


@pytest.mark.parametrize("key", ["limits", "init_container", "sidecar", "byte_quantities"])
def test_pod_requests_leave_the_second_pod_pending(key):
    assert outcomes(recorded(key)) == Counter({("g0", "p0", ()): 1, ("g0", None, ()): 1})


def test_pods_naming_one_claim_share_its_device():
    assert outcomes(recorded("shared_claim")) == Counter({("g0", "p0", ("gpu-0",)): 3, ("g1", "p0", ("gpu-0",)): 1,
                                                          ("g1", None, ()): 1})
    nodes = {p["node"] for p in recorded("shared_claim")["observed"]["pods"] if p["group"].endswith("g0")}
    assert len(nodes) == 1


def test_devices_of_a_slice_without_a_node():
    shared = recorded("all_nodes_slice")
    assert outcomes(shared) == Counter({("g0", "p0", ("nic0-0",)): 2, ("g1", "p0", ("nic0-1",)): 1,
                                        ("g1", "p0", ("nic0-2",)): 1, ("g1", None, ()): 1})
    assert len({p["node"] for p in shared["observed"]["pods"] if p["group"].endswith("g0")}) == 2
    assert outcomes(recorded("node_selector_slice")) == Counter({("g0", "p0", ("nic0-0",)): 1,
                                                                 ("g0", "p0", ("nic0-1",)): 1, ("g0", None, ()): 1})


def test_admin_access_takes_no_device():
    assert outcomes(recorded("admin_access")) == Counter({("g0", "p0", ("gpu-0",)): 1, ("g1", "p0", ("gpu-0",)): 2,
                                                          ("g2", None, ()): 1})


@pytest.mark.parametrize("key, reason", [
    ("selectors_before_counts", "SchedulerError: running \"DynamicResources\" filter plugin"),
    ("all_prepared_up_front", "SchedulerError: running \"DynamicResources\" filter plugin"),
    ("unknown_class", "device class r10-nope does not exist"),
])
def test_the_allocators_order(key, reason):
    (pod,) = recorded(key)["observed"]["pods"]
    assert pod["node"] is None and reason in pod["reason"]


def test_cel_as_kube_scheduler_evaluates_it():
    found = outcomes(recorded("cel_cross_types"))
    assert found == Counter({("g0", "p0", ("nic0-0", "nic0-1")): 1, ("g1", "p0", ("nic0-3",)): 1,
                             ("g2", None, ()): 1, ("g3", "p0", ("nic0-2",)): 1, ("g4", None, ()): 1,
                             ("g5", None, ()): 1, ("g6", "p0", ("nic0-4",)): 1, ("g7", "p0", ("nic0-5",)): 1})
    reasons = {p["group"].split("-")[1]: p["reason"] for p in recorded("cel_cross_types")["observed"]["pods"]}
    assert reasons["g2"].startswith("Unschedulable")  # model == 100 is false, not an error
    # g4 (version == string) met "CEL runtime error: no such overload", was tried again after its backoff and found
    # every NIC taken (in-use devices are skipped before selectors are evaluated); g7 (version != string) is true
    # g5 (string(version)) likewise: its first attempt was "no such overload: string(kubernetes.Semver)"
    assert reasons["g4"] and reasons["g5"]


def test_what_the_api_server_refuses_and_accepts():
    case = recorded("admission")
    refused = sorted(e.split(":", 1)[0].rsplit("/", 1)[1] for e in case["applyErrors"])
    assert refused == [f"r12-g{i}-claim0" for i in range(5)]
    text = "\n".join(case["applyErrors"])
    for words in ("found no matching overload for 'sign'", "invalid matches argument",
                  "expected type 'string' but found 'int'", "must be the name of a request in the claim",
                  "Too many: 9: must have at most 8 items"):
        assert words in text
    assert outcomes(case) == Counter({**{(f"g{i}", None, ()): 1 for i in range(5)},
                                      ("g5", "p0", ("gpu-0",)): 1, ("g6", "p0", ("gpu-1",)): 1})


def test_the_simulator_refuses_what_the_api_server_refused():
    case = recorded("admission")
    answer = simside.simulate(case["document"], kubernetes="v1.35.4")
    assert sorted(answer.problems) == [f"r12-g{i}" for i in range(5)]


def test_scores():
    assert outcomes(recorded("preferred_affinity")) == Counter({("g0", "p0", ()): 2})
    zones = recorded("zones")
    assert outcomes(zones) == Counter({("g0", "p0", ()): 2, ("g0", "p1", ()): 2})
    assert len({p["node"] for p in zones["observed"]["pods"]}) == 3  # zone-a's two nodes one each


def test_1_36_scores_the_change_a_pod_makes_to_a_nodes_balance():
    """reduced-balance-change-v1.3x.json: the second pod goes to the small node it evens out on v1.35.4, beside the
    first pod on v1.36.3 (NodeResourcesBalancedAllocation's balancedResourceScorer; tests/test_simulator_scoring.py
    has the arithmetic)."""
    def placed(minor: str) -> Counter:
        return outcomes(json.loads((FIXTURES / f"reduced-balance-change-v{minor}.json").read_text()))
    assert placed("1.35") == Counter({("g0", "p0", ()): 1, ("g1", "p1", ()): 1})
    assert placed("1.36") == Counter({("g0", "p0", ()): 1, ("g1", "p0", ()): 1})


def test_1_35_fails_to_score_a_pod_with_claims_allocated_and_not():
    """reduced-mixed-claims-v1.3x.json: a pod naming a claim another pod allocated (a NIC every node is offered) and
    a claim template of its own, two nodes able to take it: kube-scheduler v1.35.4's DynamicResources Score errs and
    the pod stays pending; v1.36.3 places it (rehearse.simside.mixed_claims_score_error)."""
    def recorded_at(minor: str) -> dict:
        return json.loads((FIXTURES / f"reduced-mixed-claims-v{minor}.json").read_text())
    old, new = recorded_at("1.35"), recorded_at("1.36")
    assert outcomes(old) == Counter({("g0", "p0", ("nic0-0",)): 1, ("g1", None, ()): 1})
    assert "number of allocations 1 is smaller than number of claims" in next(
        p["reason"] for p in old["observed"]["pods"] if p["node"] is None)
    assert outcomes(new) == Counter({("g0", "p0", ("nic0-0",)): 1, ("g1", "p1", ("nic0-1", "nic0-0")): 1})


@pytest.mark.parametrize(("minor", "errs"), [("v1.34.4", False), ("1.35", True), ("v1.35.4", True),
                                             ("v1.36.3", False), (None, False)])
def test_the_mixed_claims_score_error_is_1_35s(minor, errs):
    assert simside.mixed_claims_score_error(minor) is errs
