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
    answer = simside.simulate(case["document"])
    verdict = differential.compare(case["document"], case["observed"], answer)
    assert verdict.agrees, f"{case['document']['description']}\n{verdict.detail}"
    if case.get("determinate") is not None:  # what the simulator may claim about the case, once settled
        assert verdict.determinate == case["determinate"], case.get("why")


def test_every_fixture_names_the_scheduler_that_answered():
    for path in CASES:
        case = json.loads(path.read_text())
        assert case["kubernetes"].startswith("v1."), path
        assert case["observed"]["pods"], path
