"""Regression cases of the differential run, replayed against the simulator without Go.

Each file under tests/fixtures/differential/ holds one scenario's objects and what the real kube-scheduler did
with them (``python -m rehearse.differential --record``). The simulator must count that answer among the
layouts it considers possible: a case that once disagreed stays fixed, or stays declared undetermined.
"""

import json
from pathlib import Path

import pytest

from rehearse import differential, simside

FIXTURES = Path(__file__).parent / "fixtures" / "differential"
CASES = sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_real_schedulers_answer_is_among_the_simulators(path):
    case = json.loads(path.read_text())
    answer = simside.simulate(case["document"], kubernetes=case["kubernetes"])
    verdict = differential.compare(case["document"], case["observed"], answer)
    assert verdict.agrees, f"{case['document']['description']}\n{verdict.detail}"
    if case.get("determinate") is not None:  # what the simulator may claim about the case, once settled
        assert verdict.determinate == case["determinate"], case.get("why")


def test_every_fixture_names_the_scheduler_that_answered():
    for path in CASES:
        case = json.loads(path.read_text())
        assert case["kubernetes"].startswith("v1."), path
        assert case["observed"]["pods"], path


RUNS = sorted(FIXTURES.glob("run-*.json.gz"))


@pytest.mark.parametrize("path", RUNS, ids=[p.name for p in RUNS])
def test_a_whole_recorded_run_agrees_with_the_simulator(path):
    """Every scenario of a recorded differential run (``--save``): the simulator still counts the real
    scheduler's answer among its possible ones, so a change to the allocator, the CEL engine or the predicates
    that the real scheduler would contradict fails here, without Go."""
    run = differential.load(path)
    assert run["count"] >= 500 and len(run["cases"]) == run["count"]
    differing = []
    determinate = unjudged = 0
    for case in run["cases"]:
        answer = simside.simulate(case["document"], kubernetes=run["kubernetes"])
        verdict = differential.compare(case["document"], case["observed"], answer)
        determinate += verdict.determinate
        unjudged += verdict.unjudged is not None
        if not verdict.agrees:
            differing.append(f"{case['document']['description']}\n{verdict.detail}")
    assert not differing, "\n".join(differing)
    assert determinate >= 0.7 * run["count"]
    assert unjudged <= 0.02 * run["count"], "most scenarios are judged; flapping claim statuses are rare"


V136 = sorted(FIXTURES.glob("*-v1.36.json"))


def test_the_1_36_answers_are_not_what_the_1_35_allocator_gives():
    """kube-scheduler v1.36.3 placed these where v1.35.4 leaves pods pending (or elsewhere): the simulator must
    answer per minor (gpu_fungibility.versions.later_all_takes_the_first_alternative), not one way for all."""
    assert len(V136) >= 6
    for path in V136:
        case = json.loads(path.read_text())
        assert case["kubernetes"].startswith("v1.36."), path
        as_135 = differential.compare(case["document"], case["observed"],
                                      simside.simulate(case["document"], kubernetes="v1.35.4"))
        assert not as_135.agrees, path
