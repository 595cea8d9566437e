"""The rehearsal end to end on Kubernetes' own control plane: every shipped stack exits 0; seeded broken
stacks (built from the shipped stacks' configs) exit 1 naming the fault. Runs under `make test-rehearse`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rehearse import report, run, scenario
from tests import rehearse_seeds as seeds

ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


def _harness_module():
    """The harness client; without Go it skips on a workstation and fails under CI=true."""
    try:
        from rehearse import harness
    except ImportError as exc:  # pragma: no cover - the client ships with the harness
        pytest.fail(f"rehearse/harness.py is missing: {exc}")
    return harness


def _started(minor: str):
    harness = _harness_module()
    try:
        harness.ensure_built(minor, progress=lambda _: None)
    except harness.HarnessUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the rehearsal cannot run under CI: {exc}")
        pytest.skip(f"the rehearsal cannot run here: {exc}")
    return harness.Harness.start(minor)


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_shipped_stack_observes_every_promise(stack, capsys):
    from rehearse.__main__ import main

    _started(scenario.load(stack).minor).close()  # skips (or fails under CI) without Go
    code = main(["--stack", stack, "--json"])
    out = capsys.readouterr().out
    document = json.loads(out)
    failures = [f["message"] for p in document["phases"] for f in p["findings"] if f["severity"] == "FAIL"]
    assert code == 0, failures
    assert (ROOT / "build" / stack / "rehearse.md").is_file()


def _rehearse(s: scenario.Scenario, phases: tuple[str, ...]) -> run.Rehearsal:
    with _started(s.minor) as harness:
        return run.rehearse(s, harness, ROOT, log=lambda _: None, phases=phases)


def _failures(result: run.Rehearsal) -> list[str]:
    return [f.message for f in result.findings if f.severity == "FAIL"]


def test_a_device_plugin_daemonset_on_a_dra_pool_exits_1_naming_the_node():
    result = _rehearse(seeds.device_plugin_on_dra_pool(scenario.load("eks-dev")), ("apply", "isolation"))
    assert report.exit_code(result) == 1
    assert any("eks-l40s-0" in m and "together" in m for m in _failures(result)), _failures(result)


def test_a_selector_no_real_device_matches_exits_1_naming_the_replica():
    result = _rehearse(seeds.selector_matches_nothing(scenario.load("eks-dev"), "vllm-gpu"), ("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("vllm-gpu #1" in m and "is Pending" in m and "cannot allocate all claims" in m
               for m in _failures(result)), _failures(result)


def test_a_request_larger_than_a_node_exits_1_naming_the_resource():
    result = _rehearse(seeds.request_larger_than_node(scenario.load("dev"), "vllm-gpu"), ("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("vllm-gpu #1" in m and "Insufficient cpu" in m for m in _failures(result)), _failures(result)
