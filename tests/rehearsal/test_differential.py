"""The differential run on Kubernetes' own control plane: 500 seeded scenarios, kube-scheduler against the simulator.

Fails on any disagreement the simulator did not declare undetermined, printing each one (record it with
``python -m rehearse.differential --seed N --count 500 --record tests/fixtures/differential``, then fix the
simulator or declare the outcome undetermined). Needs Go: without it the test skips, except under CI=true.
"""


import pytest

from rehearse import differential
from rehearse.harness import HarnessUnavailable, ensure_built
from tests.ci import unavailable


def _harness_or_skip(minor):
    try:
        ensure_built(minor)
    except HarnessUnavailable as exc:
        unavailable(str(exc))


@pytest.mark.parametrize("minor", [differential.DEFAULT_MINOR])
def test_the_real_scheduler_agrees_with_the_simulator(minor):
    _harness_or_skip(minor)
    report = differential.run(differential.DEFAULT_SEED, differential.DEFAULT_COUNT, minor)
    print(report.render())
    assert not report.failures, report.failures
    assert len(report.compared) == differential.DEFAULT_COUNT
    assert not report.disagreements, report.render()
    assert not {name: errors for name, errors in report.to_json()["applyErrors"].items()}, "objects refused"
