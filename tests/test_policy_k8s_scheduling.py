"""Kubernetes node-selection semantics the isolation rules rely on."""

import pytest
from gpu_fungibility.node_selection import (
    NodeTaint,
    PodPlacement,
    evaluate,
    node_selector_matches,
    requirement_matches,
    simple_selector_matches,
    taint_from_api,
    term_matches,
    toleration_tolerates,
    untolerated_taints,
)

LABELS = {"nvidia.com/gpu.present": "true", "gpu-count": "4", "zone": "us-central1-c"}


def req(key, operator, *values):
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize(("requirement", "expected"), [
    (req("nvidia.com/gpu.present", "In", "true"), True),
    (req("nvidia.com/gpu.present", "In", "false", "yes"), False),
    (req("missing", "In", "true"), False),
    (req("nvidia.com/gpu.present", "NotIn", "true"), False),
    (req("nvidia.com/gpu.present", "NotIn", "false"), True),
    (req("missing", "NotIn", "true"), True),  # NotIn matches an absent label
    (req("zone", "Exists"), True),
    (req("missing", "Exists"), False),
    (req("missing", "DoesNotExist"), True),
    (req("zone", "DoesNotExist"), False),
    (req("gpu-count", "Gt", "2"), True),
    (req("gpu-count", "Gt", "4"), False),
    (req("gpu-count", "Lt", "8"), True),
    (req("gpu-count", "Lt", "4"), False),
    (req("zone", "Gt", "1"), False),  # a non-integer label never satisfies Gt/Lt
    (req("gpu-count", "Gt", "x"), False),
    (req("gpu-count", "Gt", "1", "2"), False),  # Gt/Lt take exactly one value
    (req("missing", "Lt", "9"), False),
    (req("zone", "Like", "us"), False),  # unknown operator: no match
])
def test_requirement_operators(requirement, expected):
    assert requirement_matches(requirement, LABELS) is expected


def test_expressions_in_a_term_are_anded():
    term = {"matchExpressions": [req("nvidia.com/gpu.present", "In", "true"), req("nvidia.com/gpu.dra", "In", "true")]}
    assert not term_matches(term, LABELS)
    assert term_matches(term, {**LABELS, "nvidia.com/gpu.dra": "true"})


def test_terms_are_ored_and_empty_terms_match_nothing():
    selector = {"nodeSelectorTerms": [
        {"matchExpressions": [req("feature.node.kubernetes.io/pci-10de.present", "In", "true")]},
        {"matchExpressions": [req("nvidia.com/gpu.present", "In", "true")]},
    ]}
    assert node_selector_matches(selector, LABELS)
    assert not node_selector_matches(selector, {"zone": "a"})
    assert not node_selector_matches({"nodeSelectorTerms": [{}]}, LABELS)
    assert not node_selector_matches({"nodeSelectorTerms": []}, LABELS)
    assert node_selector_matches(None, LABELS)  # no required affinity: every node


def test_match_fields_use_the_node_name():
    term = {"matchFields": [req("metadata.name", "In", "node-1")]}
    assert term_matches(term, {}, node_name="node-1")
    assert not term_matches(term, {}, node_name="node-2")
    assert not term_matches(term, {})  # unknown node name: cannot match


def test_node_selector_map_needs_every_pair():
    assert simple_selector_matches({"nvidia.com/gpu.present": "true"}, LABELS)
    assert not simple_selector_matches({"nvidia.com/gpu.present": "true", "x": "y"}, LABELS)
    assert simple_selector_matches({}, LABELS)


@pytest.mark.parametrize(("toleration", "taint", "expected"), [
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, NodeTaint("nvidia.com/gpu", "present"), True),
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, NodeTaint("nvidia.com/gpu", "x", "NoExecute"), True),  # any effect
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, NodeTaint("nvidia.com/gpu", "present"), False),
    ({"operator": "Exists"}, NodeTaint("anything", "v", "NoExecute"), True),  # empty key + Exists: all taints
    ({"operator": "Exists", "effect": "NoSchedule"}, NodeTaint("anything", "v", "NoExecute"), False),
    ({"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"}, NodeTaint("a", "b"), True),
    ({"key": "a", "value": "b"}, NodeTaint("a", "b"), True),  # operator defaults to Equal
    ({"key": "a", "operator": "Equal", "value": "c"}, NodeTaint("a", "b"), False),
    ({"key": "a", "operator": "Equal"}, NodeTaint("a", ""), True),
    ({"key": "other", "operator": "Exists"}, NodeTaint("a", "b"), False),
])
def test_toleration_matching(toleration, taint, expected):
    assert toleration_tolerates(toleration, taint) is expected


def test_prefer_no_schedule_never_blocks():
    taints = [NodeTaint("soft", "x", "PreferNoSchedule"), NodeTaint("hard", "x", "NoSchedule")]
    assert untolerated_taints([], taints) == [NodeTaint("hard", "x", "NoSchedule")]


def test_cloud_effect_spelling():
    assert taint_from_api({"key": "k", "value": "v", "effect": "NO_SCHEDULE"}) == NodeTaint("k", "v", "NoSchedule")
    assert taint_from_api({"key": "k", "effect": "NO_EXECUTE"}).effect == "NoExecute"
    assert taint_from_api({"key": "k", "effect": "PreferNoSchedule"}).effect == "PreferNoSchedule"


def test_evaluate_gives_every_reason():
    placement = PodPlacement(
        node_selector={"nvidia.com/gpu.present": "true"},
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [req("nvidia.com/gpu.dra", "In", "true")]}]}}},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )
    ok = evaluate(placement, {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.dra": "true"},
                  [NodeTaint("nvidia.com/gpu", "present")])
    assert ok.runs and ok.reasons == ()
    bad = evaluate(placement, {"x": "y"}, [NodeTaint("cloud.google.com/compute-class", "ccc")])
    assert not bad.runs
    assert any("nodeSelector" in r for r in bad.reasons)
    assert any("nvidia.com/gpu.dra In [true]" in r and "no nvidia.com/gpu.dra label" in r for r in bad.reasons)
    assert any("cloud.google.com/compute-class=ccc:NoSchedule" in r for r in bad.reasons)


def test_daemon_pods_get_the_controllers_default_tolerations():
    node_taints = [NodeTaint("node.kubernetes.io/unschedulable", "", "NoSchedule")]
    assert evaluate(PodPlacement({}, None, []), {}, node_taints).runs
    assert not evaluate(PodPlacement({}, None, [], daemon=False), {}, node_taints).runs
