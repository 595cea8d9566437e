"""A stack pinned to Kubernetes 1.36 rehearses on the v1.36.3 control plane (`make rehearse` with the stack's
minor): the dev stack moved to 1.36, its GPU workload tolerating a device taint, observes every promise.
Runs under `make test-rehearse` (Go); tests/test_stack_on_1_36.py plans and simulates the same copy without Go.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests import stack_on_1_36
from tests.stack_on_1_36 import STACK

ROOT = Path(__file__).resolve().parent.parent.parent


def test_a_stack_on_1_36_observes_every_promise_on_v1_36(harness, capsys, tmp_path):
    from rehearse.__main__ import main

    folder = stack_on_1_36.write(tmp_path)
    try:
        code = main(["--stack", STACK, "--stack-dir", str(folder), "--json"])  # its own v1.36 control plane
        document = json.loads(capsys.readouterr().out)
    finally:
        shutil.rmtree(ROOT / "build" / STACK, ignore_errors=True)
    failures = [f["message"] for p in document["phases"] for f in p["findings"] if f["severity"] == "FAIL"]
    assert code == 0, failures
    assert document["kubernetesMinor"] == "1.36" and document["controlPlane"].startswith("v1.36."), document
    compared = [r for p in document["phases"] for r in p["replicas"]]
    assert compared and all(r["agrees"] for r in compared), [r for r in compared if not r["agrees"]]
