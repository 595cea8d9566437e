"""The rehearsal's phases, report and exit codes, driven through a fake harness (no Go needed).

The fake (tests/rehearse_fake.py) stands in for Kubernetes only so the rehearsal's own logic is exercised:
applying, growing pools in the fallback order, reading placements, judging and reporting. What Kubernetes
decides is tested under ``make test-rehearse`` (tests/rehearsal/test_rehearse_stacks.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rehearse import report, run, scenario
from rehearse.judge import FAIL
from tests import rehearse_seeds as seeds
from tests.rehearse_fake import FakeHarness

PHASES = ("apply", "isolation", "placement", "reclaim", "overcommit")


@pytest.fixture(scope="module")
def loaded():
    """Each stack planned once; every test gets its own copy to change."""
    import copy

    cache = {name: scenario.load(name) for name in ("dev", "eks-dev")}
    return lambda name: copy.deepcopy(cache[name])


def _rehearse(s, harness=None, phases=PHASES):
    return run.rehearse(s, harness or FakeHarness(), Path("."), log=lambda _: None, phases=phases)


def test_a_shipped_stack_observes_every_promise(loaded):
    result = _rehearse(loaded("dev"))
    assert report.exit_code(result) == 0, report.render_table(result)
    names = [p.name for p in result.phases]
    assert names == ["apply", "isolation", "placement", "reclaim", "overcommit"]
    placement = next(p for p in result.phases if p.name == "placement")
    assert {(c.observed.workload, c.observed.pool) for c in placement.comparisons} == {
        ("vllm-gpu", "a100-80gb"), ("vllm-tpu", "tpu-v6e")}


def test_replicas_grow_pools_in_the_fallback_order_until_one_is_pending(loaded):
    result = _rehearse(loaded("dev"))
    overcommit = next(p for p in result.phases if p.name == "overcommit")
    [last] = overcommit.comparisons
    assert last.observed.status == "pending" and last.agrees
    assert last.observed.replica == 5  # 2 x a100-80gb (one GPU each) + 2 x a100-40gb (two GPUs per replica)


def test_a_device_plugin_on_a_dra_pool_is_a_broken_promise_naming_the_node(loaded):
    result = _rehearse(seeds.device_plugin_on_dra_pool(loaded("eks-dev")), phases=("apply", "isolation"))
    assert report.exit_code(result) == 1
    failures = [f.message for f in result.findings if f.severity == FAIL]
    assert any("eks-l40s-0" in m and "NVIDIA device plugin and the NVIDIA DRA kubelet plugin together" in m
               for m in failures), failures


def test_a_selector_no_device_matches_leaves_the_replica_pending_and_fails(loaded):
    result = _rehearse(seeds.selector_matches_nothing(loaded("eks-dev"), "vllm-gpu"), phases=("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("vllm-gpu #1" in f.message and "is Pending" in f.message and "cannot allocate all claims" in f.message
               for f in result.findings if f.severity == FAIL)


def test_a_request_larger_than_a_node_fails_naming_the_resource(loaded):
    result = _rehearse(seeds.request_larger_than_node(loaded("dev"), "vllm-gpu"), phases=("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("Insufficient cpu" in f.message for f in result.findings if f.severity == FAIL)


def test_an_object_the_api_server_refuses_is_named_with_the_servers_words(loaded):
    error = 'DeviceClass.resource.k8s.io "high-memory-gpu" is invalid: spec.selectors[0].cel.expression: Invalid'
    result = _rehearse(loaded("dev"), FakeHarness(refuse={"DeviceClass/high-memory-gpu": error}), phases=("apply",))
    assert report.exit_code(result) == 1
    [refused] = [f.message for f in result.findings if f.severity == FAIL and "refused" in f.message]
    assert "DeviceClass/high-memory-gpu (_cluster--deviceclass.resource.k8s.io--high-memory-gpu.yaml)" in refused
    assert error in refused


def test_a_control_plane_without_privileged_containers_applies_the_installer_without_them(loaded):
    """kube-apiserver --allow-privileged=false is the test server's default, not a cloud's: the object is applied
    without `privileged` (its pods still take their room) and the report says so; nothing fails."""
    result = _rehearse(loaded("dev"), FakeHarness(allow_privileged=False), phases=("apply",))
    assert report.exit_code(result) == 0, report.render_table(result)
    [note] = [t for t in result.not_applied if "nvidia-driver-installer" in t]
    assert "--allow-privileged=false" in note and "disallowed by cluster policy" in note


def test_a_disagreement_with_the_simulator_is_a_failure(loaded, monkeypatch):
    s = loaded("dev")
    real = run._simulate

    def elsewhere(sc, **kwargs):
        result = real(sc, **kwargs)
        import dataclasses
        result.replicas = [dataclasses.replace(r, pool="a100-40gb", alternatives=("gpu/a100-40gb",))
                           if r.workload == "vllm-gpu" else r for r in result.replicas]
        return result

    monkeypatch.setattr(run, "_simulate", elsewhere)
    result = _rehearse(s, phases=("apply", "placement"))
    assert report.exit_code(result) == 1
    assert any("pool a100-80gb, the simulator says a100-40gb" in f.message for f in result.findings)


def test_the_report_fits_a_comment_and_the_json_parses(loaded, tmp_path):
    result = _rehearse(loaded("dev"))
    text = report.render_markdown(result)
    assert len(text) <= 65_536 and text.startswith("## Rehearsal of `dev`: every promise observed")
    assert "| replica | Kubernetes | simulator | agrees |" in text
    document = json.loads(json.dumps(report.to_json(result)))
    assert document["exitCode"] == 0 and document["phases"][2]["replicas"][0]["agrees"] is True
    path = report.write_report(tmp_path / "dev", "rehearse.md", text)
    assert path.read_text() == text


def test_the_report_is_never_written_through_a_symbolic_link(tmp_path):
    target = tmp_path / "elsewhere.md"
    target.write_text("keep")
    out = tmp_path / "dev"
    out.mkdir()
    os.symlink(target, out / "rehearse.md")
    report.write_report(out, "rehearse.md", "new")
    assert target.read_text() == "keep" and not (out / "rehearse.md").is_symlink()
    linked = tmp_path / "linked"
    os.symlink(out, linked)
    with pytest.raises(OSError, match="symbolic link"):
        report.write_report(linked, "rehearse.md", "x")


def test_without_the_harness_client_the_cli_exits_2_with_what_to_do(monkeypatch, capsys):
    import builtins

    from rehearse.__main__ import main

    real_import = builtins.__import__

    def no_harness(name, *args, **kwargs):
        if name == "rehearse.control_plane":
            raise ImportError("no module named rehearse.control_plane")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_harness)
    assert main(["--stack", "dev"]) == 2
    assert "harness" in capsys.readouterr().err


def test_an_unknown_stack_exits_2(capsys):
    from rehearse.__main__ import main

    assert main(["--stack", "no-such-stack"]) == 2
    assert "no-such-stack" in capsys.readouterr().err
