"""The rehearsal end to end on Kubernetes' own control plane: every shipped stack exits 0; seeded broken
stacks (built from the shipped stacks' configs) exit 1 naming the fault. Runs under `make test-rehearse`.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from rehearse import report, run, scenario
from tests import rehearse_seeds as seeds
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = list(SHIPPED_STACKS)  # a user's own Pulumi.<stack>.yaml is not the tests' business


@contextlib.contextmanager
def _control_plane(shared, minor: str):
    """The session's control plane when it runs the stack's minor (emptied before and after), else one of that minor.

    ``shared`` is the shared fixture (tests/rehearsal/conftest.py): without Go it skips on a workstation and
    fails under CI (tests/ci.py), before anything here runs.
    """
    from rehearse.control_plane import Harness, minor_of

    if minor_of(shared.version) == minor:
        shared.reset()
        try:
            yield shared
        finally:
            shared.reset()
        return
    with Harness.start(minor, progress=lambda _: None) as own:
        yield own


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_shipped_stack_observes_every_promise(stack, harness, capsys):
    from rehearse.__main__ import main

    code = main(["--stack", stack, "--json"])  # its own control plane, at the stack's minor
    out = capsys.readouterr().out
    document = json.loads(out)
    failures = [f["message"] for p in document["phases"] for f in p["findings"] if f["severity"] == "FAIL"]
    assert code == 0, failures
    assert (ROOT / "build" / stack / "rehearse.md").is_file()


def _rehearse(shared, s: scenario.Scenario, phases: tuple[str, ...]) -> run.Rehearsal:
    with _control_plane(shared, s.minor) as control_plane:
        return run.rehearse(s, control_plane, ROOT, log=lambda _: None, phases=phases)


def _failures(result: run.Rehearsal) -> list[str]:
    return [f.message for f in result.findings if f.severity == "FAIL"]


def test_a_device_plugin_daemonset_on_a_dra_pool_exits_1_naming_the_node(harness):
    result = _rehearse(harness, seeds.device_plugin_on_dra_pool(scenario.load("eks-dev")), ("apply", "isolation"))
    assert report.exit_code(result) == 1
    assert any("eks-l40s-0" in m and "together" in m for m in _failures(result)), _failures(result)


def test_a_selector_no_real_device_matches_exits_1_naming_the_replica(harness):
    result = _rehearse(harness, seeds.selector_matches_nothing(scenario.load("eks-dev"), "vllm-gpu"), ("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("vllm-gpu #1" in m and "is Pending" in m and "cannot allocate all claims" in m
               for m in _failures(result)), _failures(result)


def test_a_request_larger_than_a_node_exits_1_naming_the_resource(harness):
    result = _rehearse(harness, seeds.request_larger_than_node(scenario.load("dev"), "vllm-gpu"), ("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("vllm-gpu #1" in m and "Insufficient cpu" in m for m in _failures(result)), _failures(result)
