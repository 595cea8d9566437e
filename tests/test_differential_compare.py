"""The differential run without Go: the generator, the simulator's layouts, reading the API's answer, the verdict."""

import copy
import json
from collections import Counter

import pytest

from rehearse import differential, scenarios, simside

SEED = differential.DEFAULT_SEED


@pytest.fixture(scope="module")
def generated():
    return scenarios.generate(SEED, differential.DEFAULT_COUNT)


def test_the_generator_is_a_function_of_seed_and_index(generated):
    again = scenarios.generate(SEED, 3, start=41)
    assert [s.document() for s in again] == [s.document() for s in generated[41:44]]
    assert scenarios.scenario(SEED + 1, 41).document() != generated[41].document()


def _features(sc):
    doc = json.dumps(sc.document())
    found = {p.kind for p in sc.pools}
    found |= {k for k in ("firstAvailable", '"All"', "matchAttribute", "selectors", "affinity", "tolerations",
                          "PreferNoSchedule", "compareTo", "semver") if k in doc}
    found |= {"deployment" for g in sc.groups if g.kind == "Deployment"}
    found |= {"custom class" for _ in sc.device_classes}
    found |= {"count>1" for t in sc.templates() if '"count": 2' in json.dumps(t) or '"count": 4' in json.dumps(t)}
    return found


def test_the_scenarios_cover_what_the_issue_lists(generated):
    seen = Counter(f for sc in generated for f in _features(sc))
    for feature in ("gpu", "mig", "tpu", "cpu", "firstAvailable", '"All"', "matchAttribute", "selectors", "affinity",
                    "tolerations", "PreferNoSchedule", "compareTo", "semver", "deployment", "custom class", "count>1"):
        assert seen[feature] >= 10, (feature, seen)


def test_nodes_of_one_pool_differ_only_in_their_names(generated):
    for sc in generated[:100]:
        simside.build_pools(sc.document())  # raises NotEquivalent otherwise


def test_scenarios_never_share_nodes_or_names(generated):
    names = Counter(o["metadata"]["name"] for sc in generated[:50] for o in sc.objects())
    assert max(names.values()) == 1
    for sc in generated[:50]:
        for obj in sc.objects():
            assert obj["metadata"]["name"].startswith(sc.name)
        for group in sc.groups:
            assert group.pod["nodeSelector"][scenarios.SCENARIO_LABEL] == sc.name


def test_the_simulator_answers_every_scenario_and_most_are_determinate(generated):
    answers = [simside.simulate(sc.document(), kubernetes="1.35") for sc in generated[:200]]  # as the run does
    assert all(a.layouts or a.undecided for a in answers)
    assert sum(a.determinate for a in answers) > 150
    placed = sum(bool(content) for a in answers for layout in a.layouts for pool in layout[0] for content in pool)
    assert placed > 100  # pods do get scheduled, not only stay pending


# ---- the API server's answer, as the harness lists it ----


def api_answer(document, layout):
    """Pods and claims as the API server would list them for one of the simulator's layouts."""
    pools = list(dict.fromkeys(n["metadata"]["labels"][scenarios.POOL_LABEL] for n in document["nodes"]))
    nodes = {p: [n["metadata"]["name"] for n in document["nodes"]
                 if n["metadata"]["labels"][scenarios.POOL_LABEL] == p] for p in pools}
    pods, claims = [], []

    def pod(group, node, picks):
        name = f"{group}-{len(pods)}"
        statuses = []
        for entry in sorted({p[0] for p in picks}):
            claim = f"{name}-{entry}"
            statuses.append({"name": entry, "resourceClaimName": claim})
            claims.append({"metadata": {"name": claim, "namespace": "differential"}, "status": {"allocation": {
                "devices": {"results": [{"request": r, "device": d, "driver": "x", "pool": node}
                                        for e, r, d in picks if e == entry]}}}})
        status = {"resourceClaimStatuses": statuses} if node else {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/9 nodes"}]}
        pods.append({"metadata": {"name": name, "namespace": "differential",
                                  "labels": {scenarios.GROUP_LABEL: group}},
                     "spec": {"nodeName": node} if node else {}, "status": status})

    for pool, contents in zip(pools, layout[0], strict=True):
        for node, content in zip(nodes[pool], contents, strict=True):
            for group, picks in content:
                pod(group, node, picks)
    for group in layout[1]:
        pod(group, None, ())
    return pods, claims


def _with_devices(generated):
    for sc in generated:
        doc = sc.document()
        answer = simside.simulate(doc)
        layout = next(iter(answer.layouts), None)
        if answer.determinate and any(picks for pool in layout[0] for c in pool for _, picks in c):
            yield doc, answer, layout


def test_an_answer_the_simulator_predicted_agrees(generated):
    checked = 0
    for doc, answer, layout in _with_devices(generated[:60]):
        pods, claims = api_answer(doc, layout)
        observed = differential.observe(doc, pods, claims)
        verdict = differential.compare(doc, observed, answer)
        assert verdict.agrees and verdict.determinate, verdict.detail
        checked += 1
    assert checked >= 10


def test_another_device_or_subrequest_is_a_disagreement_naming_the_group(generated):
    doc, answer, layout = next(_with_devices(generated))
    pods, claims = api_answer(doc, layout)
    changed = copy.deepcopy(claims)
    result = next(c for c in changed if c["status"]["allocation"]["devices"]["results"])
    result = result["status"]["allocation"]["devices"]["results"][0]
    result["device"] += "-other"
    verdict = differential.compare(doc, differential.observe(doc, pods, changed), answer)
    assert not verdict.agrees and verdict.determinate
    assert "real scheduler:" in verdict.detail and "-other" in verdict.detail
    assert verdict.groups_differing


def test_an_unscheduled_pod_the_simulator_placed_is_a_disagreement(generated):
    doc, answer, layout = next(_with_devices(generated))
    pods, claims = api_answer(doc, layout)
    bound = next(p for p in pods if p["spec"].get("nodeName"))
    del bound["spec"]["nodeName"]
    verdict = differential.compare(doc, differential.observe(doc, pods, claims), answer)
    assert not verdict.agrees
    assert "not scheduled" in verdict.detail


def test_node_names_within_a_pool_do_not_matter(generated):
    doc, answer, layout = next(
        (d, a, lay) for d, a, lay in _with_devices(generated)
        if max(Counter(n["metadata"]["labels"][scenarios.POOL_LABEL] for n in d["nodes"]).values()) > 1)
    pools = Counter(n["metadata"]["labels"][scenarios.POOL_LABEL] for n in doc["nodes"])
    pods, claims = api_answer(doc, layout)
    pool = max(pools, key=pools.get)
    names = [n["metadata"]["name"] for n in doc["nodes"] if n["metadata"]["labels"][scenarios.POOL_LABEL] == pool]
    swap = {names[0]: names[1], names[1]: names[0]}
    for p in pods:
        if p["spec"].get("nodeName") in swap:
            p["spec"]["nodeName"] = swap[p["spec"]["nodeName"]]
    assert differential.compare(doc, differential.observe(doc, pods, claims), answer).agrees


def test_the_report_prints_seed_count_rate_and_each_disagreement(generated):
    docs = [sc.document() for sc in generated[:30]]
    cases = differential.simulate_all(docs)
    for i, case in enumerate(cases):
        layout = next(iter(case.answer.layouts))
        pods, claims = api_answer(case.document, layout)
        if i == 3:
            pods = [p for p in pods if not p["spec"].get("nodeName")]  # nothing scheduled
            if not any(c for pool in layout[0] for c in pool):
                pods.append({"metadata": {"labels": {scenarios.GROUP_LABEL: docs[3]["groups"][0]["name"]}},
                             "spec": {"nodeName": docs[3]["nodes"][0]["metadata"]["name"]}, "status": {}})
        case.observed = differential.observe(case.document, pods, claims)
        case.verdict = differential.compare(case.document, case.observed, case.answer)
    report = differential.Report(SEED, "1.35", "v1.35.4", cases, 3.0, 0.5)
    text = report.render()
    assert f"seed {SEED}, 30 scenarios" in text and "96.67%" in text and "10.0 scenarios/s" in text
    assert "DISAGREEMENT s0003" in text
    data = report.to_json()
    assert data["seed"] == SEED and data["agreeing"] == 29 and data["disagreements"][0]["scenario"] == "s0003"


class FakeControlPlane:
    """Answers as the simulator's first layout would, except for ``wrong`` scenarios placed in a batch."""

    version = "v1.35.4"

    def __init__(self, documents, wrong=()):
        self.documents = {d["name"]: d for d in documents}
        self.wrong = set(wrong)
        self.placed: set[str] = set()

    def apply(self, objects):
        from types import SimpleNamespace
        for obj in objects:
            meta = obj.get("metadata") or {}
            labels = meta.get("labels") or (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get(
                "labels") or {}
            if scenarios.GROUP_LABEL in labels:
                self.placed.add(labels[scenarios.GROUP_LABEL].split("-")[0])
        return [SimpleNamespace(ref=differential._ref(o), ok=True, error=None) for o in objects]

    def settle(self, timeout_s=60.0, quiet_ms=500):
        return 0.0

    def list(self, *kinds):
        pods, claims = [], []
        for name in sorted(self.placed):
            document = self.documents[name]
            p, c = api_answer(document, next(iter(simside.simulate(document, kubernetes=self.version).layouts)))
            if name in self.wrong and len(self.placed) > 1:
                for pod in p:
                    pod["spec"].pop("nodeName", None)
            pods += p
            claims += c
        return {"pods": pods, "resourceclaims": claims}

    def close(self):
        pass


def test_a_run_places_batches_and_places_a_disagreeing_scenario_again_alone(generated):
    documents = [sc.document() for sc in generated[:6]]
    wrong = next(d["name"] for d in documents
                 if any(c for pool in next(iter(simside.simulate(d, kubernetes="1.35").layouts))[0] for c in pool))
    started = []

    def start():
        started.append(1)
        return FakeControlPlane(documents, wrong={wrong})

    report = differential.run(SEED, 6, "1.35", batch=3, progress=lambda *a: None, start=start)
    assert len(started) == 3  # two batches, then the scenario alone
    assert report.rechecked == {wrong: True}
    assert len(report.compared) == 6 and not report.disagreements and not report.failures
    assert f"{wrong}: disagreed in its batch, agrees placed alone" in report.render()


class BusyControlPlane(FakeControlPlane):
    """Never goes quiet with more than one scenario on it, or at all with a ``stuck`` scenario."""

    def __init__(self, documents, stuck=()):
        super().__init__(documents)
        self.stuck = set(stuck)

    def settle(self, timeout_s=60.0, quiet_ms=500):
        if len(self.placed) > 1 or self.placed & self.stuck:
            raise TimeoutError("settle: timeout after 180.0 s: objects still changing: Pod/x/y (40 writes)")
        return 0.0


def test_a_batch_that_never_goes_quiet_is_placed_one_scenario_at_a_time(generated):
    documents = [sc.document() for sc in generated[:3]]
    started = []

    def start():
        started.append(1)
        return BusyControlPlane(documents)

    report = differential.run(SEED, 3, "1.35", batch=3, progress=lambda *a: None, start=start)
    assert len(started) == 4  # the batch, then each of its three scenarios alone
    assert len(report.compared) == 3 and not report.failures and not report.disagreements
    assert list(report.split) == ["s0000..s0002"] and "Pod/x/y (40 writes)" in report.split["s0000..s0002"]
    assert "batch s0000..s0002 did not complete together" in report.render()
    assert report.to_json()["batchesPlacedOneByOne"] == report.split


def test_a_scenario_that_never_goes_quiet_alone_is_a_failure(generated):
    documents = [sc.document() for sc in generated[:3]]
    stuck = documents[1]["name"]
    report = differential.run(SEED, 3, "1.35", batch=3, progress=lambda *a: None,
                              start=lambda: BusyControlPlane(documents, stuck={stuck}))
    assert len(report.compared) == 2
    assert report.failures == [f"scenario {stuck}: TimeoutError: settle: timeout after 180.0 s: objects still "
                               "changing: Pod/x/y (40 writes)"]
    assert f"NOT COMPARED scenario {stuck}" in report.render()


def test_a_pod_that_met_a_scheduling_error_is_tried_again_after_other_pods_took_devices():
    """s0245: g0's first alternative takes *all* TPU chips under a parentUUID constraint no chip has: an error on
    the TPU node while the chips are free (the whole pod fails), a plain "no" once g1 holds them, and then g0's
    last alternative, one MIG slice, fits. kube-scheduler tries an erroring pod again after its backoff; so does
    the simulator, after every pod."""
    document = scenarios.scenario(SEED, 245).document()
    g0 = document["templates"][0]["spec"]["spec"]["devices"]
    assert g0["constraints"] == [{"matchAttribute": "gpu.nvidia.com/parentUUID"}]
    assert g0["requests"][0]["firstAvailable"][0]["allocationMode"] == "All"
    answer = simside.simulate(document, kubernetes="1.35")
    assert answer.determinate
    (pools, pending), = answer.layouts
    assert pending == ()
    assert sorted(group for node in pools[0] for group, _ in node) == ["s0245-g0"] * 4

    alone = copy.deepcopy(document)
    alone["groups"] = [g for g in alone["groups"] if g["name"] == "s0245-g0"]
    (_, pending), = simside.simulate(alone, kubernetes="1.35").layouts
    assert pending == ("s0245-g0",) * 4  # the chips stay free: the error never ends


def test_a_scenario_with_a_pod_whose_claim_statuses_flapped_is_not_judged(generated):
    document = next(sc.document() for sc in generated if any(len(g["pod"].get("resourceClaims") or ()) >= 2
                                                           for g in sc.document()["groups"]))
    answer = simside.simulate(document, kubernetes="1.35")
    pods = [{"group": g["name"], "node": None, "picks": [], "reason": "Unschedulable: ResourceClaim not created yet"}
            for g in document["groups"] for _ in range(int(g["replicas"]))]
    pods[0]["flapping"] = True
    verdict = differential.compare(document, {"pods": pods}, answer)
    assert verdict.unjudged and "kubernetes/kubernetes#138407" in verdict.unjudged
    assert verdict.agrees and not verdict.determinate
    case = differential.Case(document, answer, {"pods": pods}, verdict)
    report = differential.Report(SEED, "1.35", "v1.35.4", [case], 1.0, 0.1)
    assert report.unjudged == [case] and report.judged == [] and report.agreement_rate == 0.0
    assert f"not judged:   1 ({document['name']})" in report.render()
    assert document["name"] in report.to_json()["notJudged"]


def test_observe_marks_the_pods_the_harness_saw_flapping():
    document = {"groups": [{"name": "s9-g0"}]}
    pods = [{"metadata": {"namespace": "differential", "name": n, "labels": {scenarios.GROUP_LABEL: "s9-g0"}},
             "spec": {}, "status": {}} for n in ("s9-g0-0", "s9-g0-1")]
    observed = differential.observe(document, pods, [], flapping={"differential/s9-g0-1"})
    assert [p.get("flapping", False) for p in observed["pods"]] == [False, True]


def test_the_report_counts_non_trivial_agreements_and_enforces_its_caps(generated):
    """An agreement where kube-scheduler placed nothing is trivial; an undetermined answer is no agreement."""
    cases = differential.simulate_all([sc.document() for sc in generated[:20]])
    for case in cases:
        pods, claims = api_answer(case.document, next(iter(case.answer.layouts)))
        case.observed = differential.observe(case.document, pods, claims)
        case.verdict = differential.compare(case.document, case.observed, case.answer)
    report = differential.Report(SEED, "1.35", "v1.35.4", cases, 3.0, 0.5)
    placed = [c for c in cases if any(p["node"] for p in c.observed["pods"])]
    data = report.to_json()
    assert data["nontrivial"] == len(placed) and data["nontrivialAgreeing"] == len(placed)
    assert f"non-trivial (kube-scheduler placed a pod): {len(placed)} of {len(placed)}" in report.render()
    undecided = cases[0]
    undecided.verdict = differential.Verdict(undecided.document["name"], True, False, undecided="too many ways")
    assert undecided not in report.agreeing and data["agreeing"] - 1 == report.to_json()["agreeing"]
    assert report.to_json()["undetermined"] == [undecided.document["name"]]
    for case in cases[:10]:  # half the run undeterminate: under the 70% floor
        case.verdict.determinate = False
    for case in cases[10:11]:  # 1 of 20 not judged: over the 2% cap
        case.verdict.unjudged = differential.FLAPPING
    broken = report.cap_violations()
    assert any("not judged, more than 2%" in v for v in broken) and any("determinate, fewer than 70%" in v
                                                                          for v in broken)
    assert "CAP BROKEN" in report.render()


@pytest.mark.parametrize("text, classes", [
    ("Unschedulable: 0/3 nodes are available: 3 cannot allocate all claims.", {"devices"}),
    ("Unschedulable: 0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
     "{nvidia.com/gpu: present}.", {"cpu/memory", "affinity/taints"}),
    ("Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
     {"affinity/taints"}),
    ("the allocator refuses claim gpu: no device matches", {"devices"}),
    ("", set()), (None, set()),
])
def test_a_pending_reason_has_a_class(text, classes):
    assert differential.reason_class(text) == classes


def test_a_pending_reason_of_another_class_is_a_disagreement(generated):
    """Where both sides say why a group stays pending, the reasons' classes must meet."""
    case, layout = next((c, layout) for c in differential.simulate_all([sc.document() for sc in generated[:60]])
                        for layout in c.answer.layouts if layout[1])
    pods, claims = api_answer(case.document, layout)
    group = layout[1][0]
    for pod in pods:
        for condition in pod["status"].get("conditions", ()):
            condition["message"] = "0/2 nodes are available: 2 Insufficient cpu."
    observed = differential.observe(case.document, pods, claims)
    case.answer.problems[group] = "the allocator refuses claim gpu: no device matches"
    verdict = differential.compare(case.document, observed, case.answer)
    assert not verdict.agrees and verdict.groups_differing == [group]
    assert "kube-scheduler keeps it pending for cpu/memory, the simulator for devices" in verdict.detail
    assert verdict.reasons == {group: (["cpu/memory"], ["devices"])}
    case.answer.problems[group] = "the API server rejects the pod's resource requests: too much cpu"
    assert differential.compare(case.document, observed, case.answer).agrees
