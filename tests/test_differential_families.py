"""The differential's families of scenarios: what each adds, that the simulator answers each, that the real
scheduler's answer is read for every claim a pod uses, and the agreement reported per family."""

import json
from collections import Counter

import pytest

from rehearse import differential, scenarios, simside
from rehearse.differential import Case, Report, Verdict
from tests.test_differential_reduced import recorded

SEED = 38


@pytest.fixture(scope="module")
def generated():
    return scenarios.generate(SEED, 400)


def test_every_family_is_drawn(generated):
    families = Counter(sc.family for sc in generated)
    assert set(families) == set(scenarios.FAMILIES)
    assert min(families.values()) >= 10, families


FEATURES = {
    "shared-claim": lambda doc, text: doc["claims"] and '"resourceClaimName"' in text,
    "zones": lambda doc, text: scenarios.ZONE_LABEL in text,
    "preferred-affinity": lambda doc, text: "preferredDuringSchedulingIgnoredDuringExecution" in text,
    "pod-resources": lambda doc, text: any(k in text for k in ('"limits"', '"initContainers"', '"resources": {}',
                                                              '"second"', '"memory": "5', '"memory": "1', '"memory": "2',
                                                              '"memory": "3', '"memory": "6', '"memory": "8')),
    "cel": lambda doc, text: scenarios.NIC in text,
    "admission": lambda doc, text: True,
    "admin-access": lambda doc, text: '"adminAccess": true' in text,
    "network-slices": lambda doc, text: any("nodeName" not in s["spec"] for s in doc["resourceSlices"]),
    "partitionable": lambda doc, text: '"consumesCounters"' in text and '"sharedCounters"' in text,
    "device-taints": lambda doc, text: '"taints"' in text or '"tolerations": [{' in text,
}


def test_each_family_adds_its_case(generated):
    for sc in generated:
        doc = sc.document()
        if sc.family != "base":
            assert FEATURES[sc.family](doc, json.dumps(doc)), sc.describe()
        assert doc["family"] == sc.family


def test_the_widened_cases_reach_the_api_objects():
    text = "\n".join(json.dumps(sc.document()) for sc in scenarios.generate(SEED, 800))
    for needle in ('"restartPolicy": "Always"', '"allNodes": true', '"nodeSelectorTerms"', "sets.contains",
                   ".?model", "string(device", "index < 1.5", ".sign() == 1", "matches('[')", '"cpu": "0"',
                   '"count": 0', '"weight": 100', '"adminAccess": true'):
        assert needle in text, needle


def test_a_family_only_adds_to_its_base_scenario():
    base = scenarios.scenario(SEED, 7, family="base").document()
    for family in scenarios.FAMILIES:
        widened = scenarios.scenario(SEED, 7, family=family).document()
        assert [n["metadata"]["name"] for n in widened["nodes"]] == [n["metadata"]["name"] for n in base["nodes"]]
        assert widened["family"] == family


def test_the_simulator_answers_every_family(generated):
    answered = Counter()
    for sc in generated:
        answer = simside.simulate(sc.document(), kubernetes="v1.35.4")
        assert answer.layouts or answer.undecided, sc.describe()
        answered[sc.family] += answer.determinate
    assert all(answered[f] > 0 for f in scenarios.FAMILIES), answered


def test_observe_reads_a_claim_the_pod_names_itself():
    document = {"name": "s1", "groups": [{"name": "s1-g0"}], "nodes": []}
    pod = {"metadata": {"namespace": "differential", "name": "p", "labels": {scenarios.GROUP_LABEL: "s1-g0"}},
           "spec": {"nodeName": "n0", "resourceClaims": [{"name": "shared", "resourceClaimName": "s1-shared"},
                                                         {"name": "c0", "resourceClaimTemplateName": "t"}]},
           "status": {"resourceClaimStatuses": [{"name": "c0", "resourceClaimName": "p-c0-x"}]}}

    def claim(name, device):
        return {"metadata": {"namespace": "differential", "name": name}, "status": {"allocation": {"devices": {
            "results": [{"request": "gpu", "device": device, "driver": "d", "pool": "n0"}]}}}}

    observed = differential.observe(document, [pod], [claim("s1-shared", "gpu-0"), claim("p-c0-x", "gpu-1")])
    assert observed["pods"][0]["picks"] == [["c0", "gpu", "gpu-1"], ["shared", "gpu", "gpu-0"]]


def test_the_report_gives_agreement_per_family():
    def case(name, family, agrees, unjudged=None):
        found = Case({"name": name, "family": family, "description": name}, simside.SimAnswer(), {"pods": []})
        found.verdict = Verdict(name, agrees, agrees, unjudged=unjudged)
        return found

    report = Report(1, "1.35", "v1.35.4", [case("a", "cel", True), case("b", "cel", False), case("c", "zones", True),
                                           case("d", "zones", True, unjudged="flapped"),
                                           Case({"name": "e", "description": "e"}, simside.SimAnswer(), {"pods": []})], 1.0, 0.5)
    report.cases[-1].verdict = Verdict("e", True, False)
    assert report.by_family() == {
        "base": {"judged": 1, "agreeing": 1, "determinate": 0, "notJudged": 0},
        "cel": {"judged": 2, "agreeing": 1, "determinate": 1, "notJudged": 0},
        "zones": {"judged": 1, "agreeing": 1, "determinate": 1, "notJudged": 1},
    }
    assert report.to_json()["byFamily"] == report.by_family()
    assert any(line.split() == ["cel:", "1", "of", "2", "agree;", "1", "determinate"]
               for line in report.render().splitlines())


def test_what_a_scenario_means_the_api_server_to_refuse_is_no_apply_error():
    admission = next(sc for sc in scenarios.generate(SEED, 300) if sc.family == "admission" and sc.meant_refused)
    document = admission.document()
    (ref,) = document["meantToBeRefused"]
    case = Case(document, simside.SimAnswer(), {"pods": []}, apply_errors=[f"{ref}: is invalid"])
    assert case.unexpected_apply_errors() == []
    case.apply_errors = ["Pod/differential/x: is invalid"]
    assert case.unexpected_apply_errors() == ["Pod/differential/x: is invalid",
                                              f"{ref}: accepted, though the API server is expected to refuse it"]


def test_the_recorded_refusals_are_the_ones_meant():
    found = recorded("admission")
    case = Case(found["document"], simside.SimAnswer(), found["observed"], apply_errors=found["applyErrors"])
    assert len(found["applyErrors"]) == 5 and case.unexpected_apply_errors() == []
