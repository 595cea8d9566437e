"""The differential run on Kubernetes' own control plane: 500 seeded scenarios, kube-scheduler against the simulator.

Fails on any disagreement (placement, or the class of a pending reason where both sides give one), printing
each one (record it with ``python -m rehearse.differential --seed N --count 500 --record
tests/fixtures/differential``, then fix the simulator or declare the outcome undetermined), and on a run that
breaks :data:`rehearse.differential.CAPS` (more than 2% not judged, fewer than 70% determinate). Every scenario
that disagreed in its batch and was placed again alone is printed, with the non-trivial agreement count. Needs
Go: without it the test skips, except under CI (tests/ci.py).
"""


import pytest

from rehearse import differential
from rehearse.control_plane import HarnessUnavailable, ensure_built
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
    assert not report.cap_violations(), report.cap_violations()
    assert report.nontrivial, "kube-scheduler placed no pod in any scenario: nothing was compared that matters"
    for name, agrees in report.rechecked.items():  # also in the rendered report above
        print(f"placed again alone: {name} ({'agrees' if agrees else 'disagrees'} alone)")
    assert not {name: errors for name, errors in report.to_json()["applyErrors"].items()}, "objects refused"
