"""The GKE preflight against hostile Compute Engine answers (tests/hostile_replies.py), over real HTTP.

Each row of the shared table is served by the loopback Compute fake for one call at a time:
``regions.get`` and ``projects.get`` (quota signals: a failure is a warning naming the call, and the
offering checks are still reported), one zone's ``machineTypes.get`` (that zone is "not checked"),
and every call at once (nothing could be checked: exit 2). Deadlines are short (TEST_POLICY), so a
trickling answer is cut in well under a second rather than hanging.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from preflight.__main__ import main
from tests.hostile_replies import (
    HOSTILE_REPLIES,
    TEST_POLICY,
    TRICKLE_SECONDS,
    HostileReply,
    names_call,
    policy_for,
    scripted_replies,
)
from tests.preflight_output import line_of, verdicts

sys.path.insert(0, str(Path(__file__).parent))
from compute_fake import FakeCompute, Reply, permission_denied_body  # noqa: E402

from tests.hang_guard import HANG_GUARD_SECONDS

os.environ.setdefault("NO_GCE_CHECK", "true")
REGION = "us-central1"
STACK = {
    "cluster": {"cloud": "gke", "name": "pf", "location": REGION, "zones": ["us-central1-a", "us-central1-c"]},
    "nodePools": {
        "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1},
                      "spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 2}},
    },
    "computeClasses": {"gpus": {"pools": ["a100-80gb"]}},
}
REGION_PATH = f"/projects/demo-project/regions/{REGION}$"
PROJECT_PATH = "/projects/demo-project$"  # projects.get: nothing after the project


@pytest.fixture
def fake(monkeypatch, tmp_path):
    for key in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    with FakeCompute() as compute:
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "test-token")
        monkeypatch.setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", compute.url)
        for zone in ("us-central1-a", "us-central1-c"):
            compute.offer(zone, "a2-ultragpu-1g")
        compute.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
        yield compute


def run(tmp_path: Path, capsys, row: HostileReply | None = None) -> tuple[int, str, str]:
    config = {f"gpu-fungibility:{k}": v for k, v in STACK.items()} | {"gcp:project": "demo-project"}
    (tmp_path / "Pulumi.pf.yaml").write_text(json.dumps({"config": config}))
    code = main(["--stack", "pf", "--stack-dir", str(tmp_path)], policy=policy_for(row) if row else TEST_POLICY)
    out = capsys.readouterr()
    return code, out.out, out.err


def replies(row: HostileReply, good: dict, figures: list[tuple[str, ...]], call: str) -> list[Reply]:
    """The row as Compute answers: ``good`` is the real answer, ``figures`` the paths to numbers in it."""
    return scripted_replies(row, good, figures, json.dumps(_error(row.status, call)).encode(), Reply)


def _error(status: int, call: str) -> dict:
    if status == 403:
        return permission_denied_body(call, "projects/demo-project")
    status_name = {429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
    return {"error": {"code": status, "message": "Quota exceeded for quota metric 'Read requests'" if status == 429
                      else "The service is currently unavailable.", "status": status_name}}


def region_body(fake: FakeCompute) -> dict:
    return {"kind": "compute#region", "name": REGION, "quotas": list(fake.quotas[REGION].values())}


def project_body(fake: FakeCompute) -> dict:
    return {"kind": "compute#project", "name": "demo-project", "quotas": list(fake.project_quotas.values())}


def hits(fake: FakeCompute, part: str) -> int:
    return sum(1 for method, path, _ in fake.requests if method == "GET" and re.search(part, path))


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_regions_get_answering_badly_leaves_a_warning_and_the_rest_of_the_report(fake, tmp_path, capsys, row):
    fake.script(REGION_PATH, *replies(row, region_body(fake), [("quotas", "0", "limit")], "compute.regions.get"))
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    attempts = hits(fake, REGION_PATH)
    if row.recovers:
        assert verdicts(out) == {"a100-80gb": "SERVED"} and attempts == 2
        return
    assert verdicts(out) == {"a100-80gb": "WARN"}
    line = line_of(out, "a100-80gb")
    assert names_call(line, f"quota not checked: Compute Engine regions.get {REGION}", row.kind), line
    assert re.search(r"a100-80gb +us-central1-a +a2-ultragpu-1g +offered", out)  # the offering checks still ran
    assert "GPUS_ALL_REGIONS headroom" not in line  # a warning line lists the warnings, not the headroom
    assert attempts <= TEST_POLICY.attempts
    assert "call(s) gave no usable answer" in out


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_projects_get_answering_badly_leaves_gpus_all_regions_unchecked(fake, tmp_path, capsys, row):
    fake.script(PROJECT_PATH, *replies(row, project_body(fake), [("quotas", "0", "usage")], "compute.projects.get"))
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    if row.recovers:
        assert verdicts(out) == {"a100-80gb": "SERVED"} and hits(fake, PROJECT_PATH) == 2
        return
    line = line_of(out, "a100-80gb")
    assert verdicts(out) == {"a100-80gb": "WARN"}
    assert names_call(line, "quota not checked: Compute Engine projects.get demo-project", row.kind), line
    assert re.search(r"NVIDIA_A100_80GB_GPUS +8 +0 +8", out)  # the regional quota is still read


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_one_zone_answering_badly_is_not_checked_and_the_other_zone_still_serves(fake, tmp_path, capsys, row):
    good = {"kind": "compute#machineType", "name": "a2-ultragpu-1g", "guestCpus": 12, "memoryMb": 174080,
            "accelerators": [{"guestAcceleratorType": "nvidia-a100-80gb", "guestAcceleratorCount": 1}]}
    fake.script("/zones/us-central1-a/machineTypes/", *replies(
        row, good, [("guestCpus",), ("accelerators", "0", "guestAcceleratorCount")], "compute.machineTypes.get"))
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    if row.recovers:
        assert verdicts(out) == {"a100-80gb": "SERVED"}
        return
    assert verdicts(out) == {"a100-80gb": "WARN"}
    assert names_call(line_of(out, "a100-80gb"),
                      "offering not checked in us-central1-a: Compute Engine machineTypes.get us-central1-a/a2-ultragpu-1g",
                      row.kind)
    assert re.search(r"a100-80gb +us-central1-c +a2-ultragpu-1g +offered", out)


#: One answer every Compute call would accept, and the numbers each call reads from it.
EVERY_CALL_ANSWER = {"kind": "compute#answer", "quotas": [{"metric": "CPUS", "limit": 8, "usage": 0}], "guestCpus": 12,
                     "memoryMb": 174080, "maximumCardsPerInstance": 8}
EVERY_CALL_FIGURES = [("quotas", "0", "limit"), ("guestCpus",), ("maximumCardsPerInstance",)]


def test_every_call_answering_badly_means_nothing_could_be_checked(fake, tmp_path, capsys):
    for row in HOSTILE_REPLIES:
        if row.recovers:
            continue
        fake.scripts.clear()
        fake.requests.clear()
        fake.script("/compute/v1/", *replies(row, EVERY_CALL_ANSWER, EVERY_CALL_FIGURES, "compute.regions.get"))
        code, out, err = run(tmp_path, capsys, row)
        assert code == 2, (row.name, out, err)
        assert out == "" and "Traceback" not in err
        assert err.startswith("preflight: nothing could be checked: no call to the Compute Engine API was answered")
        assert names_call(err, f"Compute Engine regions.get {REGION}", row.kind), (row.name, err)


def test_an_answer_larger_than_any_compute_answer_is_refused_unread(fake, tmp_path, capsys):
    padding = " " * (9 * 1024 * 1024)  # valid JSON, 9 MiB of it
    fake.script(REGION_PATH, Reply(200, json.dumps(region_body(fake)).encode() + padding.encode()))
    code, out, err = run(tmp_path, capsys)
    assert code == 0 and err == ""
    assert "quota not checked: Compute Engine regions.get us-central1: malformed answer (HTTPException: answer " \
           "larger than 8388608 bytes)" in line_of(out, "a100-80gb")


def test_json_lists_the_unanswered_calls(fake, tmp_path, capsys):
    denied = HostileReply("access denied", status=403, body="error", kind="denied")
    fake.script(REGION_PATH, *replies(denied, region_body(fake), [], "compute.regions.get"))
    config = {f"gpu-fungibility:{k}": v for k, v in STACK.items()} | {"gcp:project": "demo-project"}
    (tmp_path / "Pulumi.pf.yaml").write_text(json.dumps({"config": config}))
    code = main(["--stack", "pf", "--stack-dir", str(tmp_path), "--json"], policy=TEST_POLICY)
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["exit_code"] == 0
    assert report["unanswered_calls"] == [
        "Compute Engine regions.get us-central1: permission denied (403: Required 'compute.regions.get' permission "
        "for 'projects/demo-project') (needs compute.regions.get)"]
    (pool,) = report["pools"]
    assert pool["verdict"] == "warn" and pool["served_zones"] == ["us-central1-a", "us-central1-c"]


def test_the_command_ends_within_its_deadline_when_every_answer_trickles(fake, tmp_path):
    """As a user runs it: a subprocess whose every call trickles is cut by its deadlines and exits 2, not never."""
    import subprocess

    config = {f"gpu-fungibility:{k}": v for k, v in STACK.items()} | {"gcp:project": "demo-project"}
    (tmp_path / "Pulumi.pf.yaml").write_text(json.dumps({"config": config}))
    fake.script("/compute/v1/", Reply(200, b'{"kind": "compute#region", "quotas": []}' * 50, trickle=TRICKLE_SECONDS))
    env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "preflight", "--stack", "pf", "--stack-dir", str(tmp_path),
                           "--call-timeout", "0.5", "--deadline", "1.5"], cwd=Path(__file__).resolve().parent.parent,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nothing could be checked" in done.stderr and "Traceback" not in done.stderr
    assert "no complete answer within 0.5 s" in done.stderr
