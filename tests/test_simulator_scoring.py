"""The simulator's kube-scheduler scores against the cases of Kubernetes' own scoring tests.

Each case is a row of a table in k8s.io/kubernetes v1.35.4, pkg/scheduler/framework/plugins/ (named on the
case), with the same inputs and expected scores; the formulas are the same at v1.34.4 and v1.36.3, except
NodeResourcesBalancedAllocation's, which v1.36.3 changed (its own table, at v1.36.3, below the 1.35 one).
"""

from __future__ import annotations

import pytest
from gpu_fungibility.node_selection import NodeTaint

from simulator import scoring
from simulator.scoring import (
    Candidate,
    NodeShape,
    ScoredPod,
    balanced_allocation,
    default_normalize,
    default_profile,
    dynamic_resources_score,
    least_allocated,
    node_affinity_score,
    taint_toleration_score,
    topology_spread_scores,
)

HOST = "kubernetes.io/hostname"


# noderesources/least_allocated_test.go TestLeastAllocatedScoringStrategy
@pytest.mark.parametrize(("requested", "allocatable", "expected"), [
    # "nothing scheduled, resources requested, differently sized nodes"
    ((3000, 5000), (4000, 10000), 37),
    ((3000, 5000), (6000, 10000), 50),
    # "no resources requested, pods scheduled with resources": 6000 cpu on 10000, 0 / 5000 memory on 20000
    ((6000, 0), (10000, 20000), 70),
    ((6000, 5000), (10000, 20000), 57),
])
def test_least_allocated(requested, allocatable, expected):
    assert least_allocated(requested, allocatable) == expected


def test_least_allocated_scores_zero_for_a_resource_requested_beyond_the_node():
    assert least_allocated((5000, 0), (4000, 10000)) == 50  # cpu 0, memory 100


# noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation
@pytest.mark.parametrize(("requested", "allocatable", "expected"), [
    ((3000, 5000), (4000, 10000), 87),  # "nothing scheduled, resources requested, differently sized nodes"
    ((3000, 5000), (6000, 10000), 100),
    ((6000, 5000), (10000, 20000), 82),  # "resources requested, pods scheduled with resources"
    ((6000, 10000), (10000, 20000), 95),
    ((6000, 10000), (10000, 50000), 80),  # "... differently sized nodes"
    ((6000, 0), (6000, 10000), 50),  # "requested resources at node capacity"
    ((6000, 5000), (6000, 10000), 75),
    ((3000, 5000, 4), (3500, 40000, 8), 70),  # "include scalar resource on a node ...": three fractions
])
def test_balanced_allocation(requested, allocatable, expected):
    assert balanced_allocation(requested, allocatable) == expected


# noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation at v1.36.3, where the score is the
# change the pod makes to the node's balance (balancedResourceScorer): (before, with the pod, allocatable, score)
@pytest.mark.parametrize(("before", "requested", "allocatable", "expected"), [
    ((0, 0), (3000, 5000), (4000, 10000), 68),  # "nothing scheduled, ... differently sized nodes": 100 -> 87
    ((0, 0), (3000, 5000), (6000, 10000), 75),  # 100 -> 100
    ((3000, 0), (6000, 5000), (10000, 20000), 73),  # "resources requested, pods scheduled with resources": 85 -> 82
    ((3000, 5000), (6000, 10000), (10000, 20000), 74),  # 97 -> 95
    ((3000, 5000), (6000, 10000), (10000, 50000), 70),  # "... differently sized nodes": 90 -> 80
    ((3000, 0), (3000, 5000), (3000, 5000), 100),  # "nodes to reach min/max score": 50 -> 100
    ((0, 0), (0, 5000), (3000, 5000), 50),  # 100 -> 50
    ((3000, 0), (6000, 0), (6000, 10000), 62),  # "requested resources at node capacity": 75 -> 50
    ((3000, 5000), (6000, 5000), (6000, 10000), 62),  # 100 -> 75
    ((3000, 5000, 3), (3000, 5000, 4), (3500, 40000, 8), 75),  # "scalar resource is included ...": 69 -> 70
    ((3000, 5000, 0), (3000, 5000, 1), (3500, 40000, 8), 76),  # 62 -> 65
])
def test_balanced_allocation_scores_the_change_from_1_36(before, requested, allocatable, expected):
    assert balanced_allocation(requested, allocatable, before) == expected


def test_a_best_effort_pod_gets_no_balanced_allocation_score():
    """balanced_allocation.go PreScore: a pod requesting neither cpu nor memory is skipped (Skip: every node 0),
    at v1.34.4, v1.35.4 and v1.36.3; LeastAllocated still scores it."""
    shape = NodeShape((4000, 10000), (3000, 0))
    assert shape.scores((0, 0)) == (62, 0)
    assert shape.scores((0, 0), balance_change=True) == (62, 0)


# nodeaffinity/node_affinity_test.go TestNodeAffinityPriority, affinity2 and labels 1, 5, 2
def _term(**labels):
    return {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]}


AFFINITY2 = [(2, _term(foo="bar")), (4, _term(key="value")), (5, _term(foo="bar", key="value", az="az1"))]


def test_node_affinity_different_priorities():
    """"all nodes matches the preferred scheduling requirements of pod but with different priorities": 18/100/36."""
    nodes = [{"foo": "bar"}, {"foo": "bar", "key": "value", "az": "az1"}, {"key": "value"}]
    raw = [node_affinity_score(AFFINITY2, labels) for labels in nodes]
    assert raw == [2, 11, 4]
    assert default_normalize(raw) == [18, 100, 36]


def test_node_affinity_no_node_matches():
    """"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero"."""
    nodes = [{"abc": "az11", "def": "az22"}, {"key": "value"}, {"az": "az1"}]
    assert default_normalize([node_affinity_score(AFFINITY2[:1], n) for n in nodes]) == [0, 0, 0]


# tainttoleration/taint_toleration_test.go TestTaintTolerationScore
def _prefer(key, value, effect="PreferNoSchedule"):
    return NodeTaint(key, value, effect)


TOLERATE_FOO_BAR = [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}]


def _taint_scores(tolerations, nodes):
    return default_normalize([taint_toleration_score(n, tolerations) for n in nodes], reverse=True)


def test_taints_tolerated_score_higher():
    """"node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"."""
    assert _taint_scores(TOLERATE_FOO_BAR, [[_prefer("foo", "bar")], [_prefer("foo", "blah")]]) == [100, 0]


def test_the_more_intolerable_taints_the_lower_the_score():
    """"the more intolerable taints a node has, the lower score it gets."."""
    nodes = [[], [_prefer("cpu-type", "arm64")], [_prefer("cpu-type", "arm64"), _prefer("disk-type", "ssd")]]
    assert _taint_scores(TOLERATE_FOO_BAR, nodes) == [100, 50, 0]


def test_only_prefer_no_schedule_counts():
    """"only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority
    function": NoSchedule tolerations do not tolerate a PreferNoSchedule taint; NoSchedule taints do not count."""
    tolerations = [{"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"},
                   {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": "NoSchedule"}]
    nodes = [[], [_prefer("cpu-type", "arm64", "NoSchedule")],
             [_prefer("cpu-type", "arm64"), _prefer("disk-type", "ssd", "NoSchedule")]]
    assert _taint_scores(tolerations, nodes) == [100, 100, 0]


# podtopologyspread/scoring_test.go TestPodTopologySpreadScore
def _hosts(*names):
    return [{HOST: n} for n in names]


def test_spread_one_constraint_on_node_all_4_nodes_candidates():
    """"one constraint on node, all 4 nodes are candidates": pods 2/1/0/3, maxSkew 1 -> 20/60/100/0."""
    scores = topology_spread_scores(_hosts("a", "b", "c", "d"), [2, 1, 0, 3], {}, constraints=[(HOST, 1)])
    assert scores == [20, 60, 100, 0]


def test_spread_max_skew_2():
    """"one constraint on node, all 4 nodes are candidates, maxSkew=2" -> 33/66/100/16."""
    scores = topology_spread_scores(_hosts("a", "b", "c", "d"), [2, 1, 0, 3], {}, constraints=[(HOST, 2)])
    assert scores == [33, 66, 100, 16]


def test_spread_system_defaulting_nodes_without_zone():
    """"system defaulting, nodes don't have zone, pods match service": pods 4/3/2/1 -> 44/66/77/100."""
    assert topology_spread_scores(_hosts("a", "b", "c", "d"), [4, 3, 2, 1], {}) == [44, 66, 77, 100]


def test_spread_two_constraints_on_zone_and_node():
    """"two Constraints on zone and node, 2 out of 4 nodes are candidates": zone1 holds 3 pods, zone2 6;
    candidates node-a (2 pods) and node-x (2 pods) -> 100/63."""
    nodes = [{HOST: "node-a", "zone": "zone1"}, {HOST: "node-x", "zone": "zone2"}]
    scores = topology_spread_scores(nodes, [2, 2], {"zone": {"zone1": 3, "zone2": 6}},
                                    constraints=[("zone", 1), (HOST, 1)])
    assert scores == [100, 63]


# dynamicresources/dynamicresources_test.go Test_computesScore and TestNormalizeScore
@pytest.mark.parametrize(("allocated", "expected"), [
    ([[0]], 8),  # "req-1/subreq-1"
    ([[7]], 1),  # "req-1/subreq-8"
    ([[3, 4]], 9),  # req-1/subreq-4 and req-2/subreq-5 in one claim
    ([[7], [7]], 2),  # "multiple-claims-with-last-subrequests-allocated"
    ([[0], [0]], 16),  # "multiple-claims-with-top-subrequests-allocated"
])
def test_dynamic_resources_score(allocated, expected):
    assert dynamic_resources_score(allocated) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ([42], [100]), ([8, 8], [100, 100]), ([2**31 - 1, 0], [100, 0]), ([99, 98, 97], [100, 98, 97]),
])
def test_default_normalize(raw, expected):
    assert default_normalize(raw) == expected


# ---- the profile at each minor ------------------------------------------------------------------------


def test_weights_by_minor():
    """apis/config/v1/default_plugins.go at v1.34.4, v1.35.4, v1.36.3."""
    base = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
            "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert dict(default_profile("1.34").weights) == base
    assert dict(default_profile("1.35").weights) == {**base, "DynamicResources": 2}
    assert dict(default_profile("1.36").weights) == {**base, "DynamicResources": 2}
    assert not default_profile("1.34").scores_prioritized_list


def test_balanced_allocation_scores_the_change_only_from_1_36():
    """noderesources/balanced_allocation.go balancedResourceScorer: with the pod at v1.34.4 and v1.35.4, the
    change the pod makes at v1.36.3 (no feature gate)."""
    assert [default_profile(m).balance_change for m in ("1.34", "1.35", "1.36", "1.37")] == [False, False, True, True]


# ---- what this means for the stacks' pools ------------------------------------------------------------

GIB = 1024**3


def _gpu_node(name, pool, cpu_m, memory_gib, used=(500, 2 * GIB)):
    return Candidate(name, {HOST: name, "pool": pool, "topology.kubernetes.io/zone": "z1"}, (),
                     (NodeShape((cpu_m, memory_gib * GIB), used),), subrequests=((0 if pool == "small" else 1,),))


def test_the_prioritized_list_score_alone_loses_to_a_bigger_fallback_node():
    """1.35: a pod sized for the small preferred node; the big fallback node wins on LeastAllocated."""
    pod = ScoredPod((3200, 27 * GIB))
    nodes = [_gpu_node("small-0", "small", 3920, 30), _gpu_node("big-0", "big", 47810, 180)]
    profile = default_profile("1.35")
    scored = scoring.score(profile, pod, nodes)
    assert scored[0].plugins["DynamicResources"][0] - scored[1].plugins["DynamicResources"][0] == 2 * (100 - 87)
    assert [w.candidate.key for w in scoring.winners(scored, profile)] == ["big-0"]


def test_a_preferred_term_of_weight_100_wins_it_back():
    pod = ScoredPod((3200, 27 * GIB), preferred=((100, _term(pool="small")),))
    nodes = [_gpu_node("small-0", "small", 3920, 30), _gpu_node("big-0", "big", 47810, 180)]
    for minor in ("1.34", "1.35", "1.36"):
        profile = default_profile(minor)
        assert [w.candidate.key for w in scoring.winners(scoring.score(profile, pod, nodes), profile)] == ["small-0"]


def test_identical_nodes_tie():
    pod = ScoredPod((3200, 27 * GIB))
    nodes = [_gpu_node("a", "small", 3920, 30), _gpu_node("b", "small", 3920, 30)]
    profile = default_profile("1.34")
    assert len(scoring.winners(scoring.score(profile, pod, nodes), profile)) == 2


def _cpu_node(name, cpu, memory_gib, used=(0, 0)):
    return Candidate(name, {HOST: name}, (), (NodeShape((cpu * 1000, memory_gib * GIB), used),))


def test_1_36_no_longer_prefers_the_node_a_pod_balances():
    """The reduced case balance_change (rehearse/reduced.py): a 2-CPU 4Gi pod evens out an empty 4-CPU 8Gi node
    (balance 100 with it: 1.35's BalancedAllocation wins it that node by 14) but changes neither node's balance
    (1.36: 75 on both), so LeastAllocated sends it beside a memory-heavy pod on a 16-CPU 32Gi node."""
    pod = ScoredPod((2000, 4 * GIB), spread=False)
    nodes = [_cpu_node("big", 16, 32, used=(100, 16 * GIB)), _cpu_node("small", 4, 8)]
    totals = {}
    for minor in ("1.35", "1.36"):
        profile = default_profile(minor)
        scored = scoring.score(profile, pod, nodes)
        totals[minor] = [s.low for s in scored]
        assert [w.candidate.key for w in scoring.winners(scored, profile)] == ["small" if minor == "1.35" else "big"]
    assert [s.plugins["NodeResourcesBalancedAllocation"][0] for s in scoring.score(default_profile("1.36"), pod, nodes)
            ] == [75, 75]
    assert totals["1.35"][1] - totals["1.35"][0] == 14 and totals["1.36"][0] - totals["1.36"][1] == 11


def test_equal_totals_are_a_tie_the_simulator_leaves_open():
    """1.36 halves the balance change, so a small pod on a near-empty node and beside a pod can total the same:
    both are winners, and the simulator claims neither (seed 3902 s0008; kube-scheduler takes the tied node first
    in its feasible list, an order the simulator does not know)."""
    pod = ScoredPod((250, GIB), spread=False)
    nodes = [_cpu_node("empty", 48, 128), _cpu_node("beside", 48, 128, used=(250, GIB // 4))]
    old, new = default_profile("1.35"), default_profile("1.36")
    assert [w.candidate.key for w in scoring.winners(scoring.score(old, pod, nodes), old)] == ["empty"]
    assert [w.candidate.key for w in scoring.winners(scoring.score(new, pod, nodes), new)] == ["empty", "beside"]


def test_zone_spread_bound():
    """One pod placed in one of three zones: log(5) = 1.609 against the 6 the offsets give -> 22 points."""
    assert scoring.zone_spread_bound(0, 3) == 0
    assert scoring.zone_spread_bound(3, 1) == 0
    assert scoring.zone_spread_bound(1, 3) == 22
