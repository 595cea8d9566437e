"""The GKE capacity preflight against a local Compute Engine API (tests/compute_fake.py) on 127.0.0.1.

Every request really crosses HTTP: the preflight's urllib client, google-auth's token exchanges
(a service-account JWT signed with a key made here, a gcloud refresh token) and the fake's
documented response and error bodies. No credential source outside the test is used: the token,
key file and gcloud config folder exist only in tmp_path, and NO_GCE_CHECK keeps google-auth off
the metadata server.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from preflight.__main__ import main

sys.path.insert(0, str(Path(__file__).parent))
from compute_fake import FakeCompute, api_disabled_body, permission_denied_body  # noqa: E402

from tests.hang_guard import HANG_GUARD_SECONDS
from tests.preflight_output import line_of, verdicts

os.environ.setdefault("NO_GCE_CHECK", "true")  # before google-auth reads it: never probe a metadata server
ROOT = Path(__file__).resolve().parent.parent
REGION = "us-central1"

BASE = {
    "cluster": {"cloud": "gke", "name": "pf", "location": REGION, "zones": ["us-central1-a", "us-central1-c"]},
    "nodePools": {
        "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1},
                      "spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 2}},
    },
    "computeClasses": {"gpus": {"pools": ["a100-80gb"]}},
}


def write_stack(folder: Path, raw: dict, project: str | None = "demo-project") -> Path:
    config = {f"gpu-fungibility:{k}": v for k, v in raw.items()}
    if project:
        config["gcp:project"] = project
    (folder / "Pulumi.pf.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def clean_google_env(monkeypatch, tmp_path: Path) -> None:
    for key in ("GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no gcloud ADC file there
    monkeypatch.setenv("NO_GCE_CHECK", "true")


@pytest.fixture
def fake(monkeypatch, tmp_path):
    clean_google_env(monkeypatch, tmp_path)
    with FakeCompute() as compute:
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "test-token")
        monkeypatch.setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", compute.url)
        yield compute


def run(tmp_path: Path, raw: dict, capsys, *extra: str, project: str | None = "demo-project"):
    folder = tmp_path / "stack"
    folder.mkdir(exist_ok=True)
    code = main(["--stack", "pf", "--stack-dir", str(write_stack(folder, raw, project)), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def offer_everywhere(fake: FakeCompute, machine: str = "a2-ultragpu-1g",
                     zones: tuple[str, ...] = ("us-central1-a", "us-central1-c")) -> None:
    for zone in zones:
        fake.offer(zone, machine)


def test_pool_offered_in_all_zones_with_quota_is_served(fake, tmp_path, capsys):
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8, usage=2)
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 0, out + err
    assert verdicts(out) == {"a100-80gb": "SERVED"}
    assert "us-central1-a, us-central1-c; NVIDIA_A100_80GB_GPUS headroom 6 covers max 2 nodes" in out
    assert "NVIDIA_A100_80GB_GPUS  8      2      6         1 / 1 / 2" in out
    paths = [p for method, p, _ in fake.requests if method == "GET"]
    assert f"/compute/v1/projects/demo-project/regions/{REGION}" in paths
    assert "/compute/v1/projects/demo-project/zones/us-central1-a/machineTypes/a2-ultragpu-1g" in paths
    assert "/compute/v1/projects/demo-project/zones/us-central1-c/acceleratorTypes/nvidia-a100-80gb" in paths
    assert {h["Authorization"] for _, _, h in fake.requests} == {"Bearer test-token"}


def test_pool_offered_in_some_zones_is_partly_served(fake, tmp_path, capsys):
    offer_everywhere(fake, zones=("us-central1-c",))
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 0, out
    assert verdicts(out) == {"a100-80gb": "WARN"}
    assert "only us-central1-c of us-central1-a, us-central1-c offer it (a2-ultragpu-1g not offered in " \
           "us-central1-a)" in line_of(out, "a100-80gb")
    row = next(r for r in out.splitlines() if r.startswith("a100-80gb  us-central1-a"))
    assert row.split()[-1] == "no"


def test_pool_offered_in_no_zone_is_not_served(fake, tmp_path, capsys):
    fake.offer("us-central1-b", "a2-ultragpu-1g")  # a zone the pool does not use
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 1, out
    assert verdicts(out) == {"a100-80gb": "NOT SERVED"}
    assert "no configured zone (us-central1-a, us-central1-c) offers a2-ultragpu-1g with 1 x nvidia-a100-80gb" \
        in line_of(out, "a100-80gb")


def test_machine_offered_without_its_gpu_is_not_served(fake, tmp_path, capsys):
    for zone in ("us-central1-a", "us-central1-c"):
        fake.offer(zone, "a2-ultragpu-1g", with_accelerator_type=False)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 1
    assert "nvidia-a100-80gb not offered in us-central1-a" in line_of(out, "a100-80gb")


def test_attached_t4_needs_the_accelerator_type_and_enough_cards_per_vm(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"] = {"t4": {"machineType": "n1-standard-16", "accelerator": {"type": "nvidia-tesla-t4", "count": 4},
                               "spot": False, "onDemandFallback": True, "autoscaling": {"min": 0, "max": 1}}}
    raw["computeClasses"] = {"gpus": {"pools": ["t4"]}}
    fake.offer("us-central1-a", "n1-standard-16")  # no T4 in this zone
    fake.offer("us-central1-c", "n1-standard-16")
    fake.offer_accelerator("us-central1-c", "nvidia-tesla-t4", max_cards=2)
    fake.set_quota(REGION, "NVIDIA_T4_GPUS", limit=8)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    reason = line_of(out, "t4")
    assert "nvidia-tesla-t4 not offered in us-central1-a" in reason
    assert "us-central1-c allows at most 2 x nvidia-tesla-t4 per VM, the pool asks 4" in reason
    fake.offer_accelerator("us-central1-c", "nvidia-tesla-t4", max_cards=4)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0 and verdicts(out) == {"t4": "WARN"}


def test_machine_carrying_another_gpu_than_the_pool_is_not_usable(fake, tmp_path, capsys):
    for zone in ("us-central1-a", "us-central1-c"):
        fake.offer(zone, "a2-ultragpu-1g", accelerator=("nvidia-a100-80gb", 2))
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 1
    assert "a2-ultragpu-1g carries 2 x nvidia-a100-80gb in us-central1-a, the pool says 1 x nvidia-a100-80gb" \
        in line_of(out, "a100-80gb")


@pytest.mark.parametrize(("limit", "usage", "expected"), [
    (0, 0, "leaves 0 GPUs (0 - 0 in use); one node needs 1"),
    (4, 4, "leaves 0 GPUs (4 - 4 in use); one node needs 1"),
])
def test_quota_below_one_node_is_not_served(fake, tmp_path, capsys, limit, usage, expected):
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=limit, usage=usage)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 1, out
    assert verdicts(out) == {"a100-80gb": "NOT SERVED"}
    assert f"quota NVIDIA_A100_80GB_GPUS in {REGION} {expected}" in line_of(out, "a100-80gb")


def test_quota_below_min_nodes_is_not_served(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a100-80gb"]["autoscaling"] = {"min": 3, "max": 4}
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=4, usage=2)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert "leaves 2 GPUs (4 - 2 in use); min 3 nodes need 3" in line_of(out, "a100-80gb")


def test_max_nodes_beyond_the_headroom_warn(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a100-80gb"]["autoscaling"] = {"min": 1, "max": 5}
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=3)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0
    assert verdicts(out) == {"a100-80gb": "WARN"}
    assert "max 5 nodes would need 5, the autoscaler stops at 3 nodes" in line_of(out, "a100-80gb")


def test_metric_the_region_does_not_list_warns(fake, tmp_path, capsys):
    offer_everywhere(fake)
    fake.set_quota(REGION, "CPUS", limit=24)
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 0
    assert verdicts(out) == {"a100-80gb": "WARN"}
    assert "quota not checked: region us-central1 lists no NVIDIA_A100_80GB_GPUS quota" in line_of(out, "a100-80gb")


def test_region_without_quota_information_warns(fake, tmp_path, capsys):
    offer_everywhere(fake)
    fake.quota_warning = {"code": "QUOTA_INFO_UNAVAILABLE", "message": "Quota information is unavailable."}
    code, out, _ = run(tmp_path, BASE, capsys)
    assert code == 0 and verdicts(out) == {"a100-80gb": "WARN"}
    assert "QUOTA_INFO_UNAVAILABLE" in line_of(out, "a100-80gb")


def test_spot_pools_use_preemptible_quota_and_fall_back_to_standard_without_it(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a100-80gb"].update(spot=True, onDemandFallback=False)
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=0)
    fake.set_quota(REGION, "PREEMPTIBLE_NVIDIA_A100_80GB_GPUS", limit=4)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0 and "PREEMPTIBLE_NVIDIA_A100_80GB_GPUS headroom 4" in line_of(out, "a100-80gb")
    fake.set_quota(REGION, "PREEMPTIBLE_NVIDIA_A100_80GB_GPUS", limit=0)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert "quota NVIDIA_A100_80GB_GPUS in us-central1 leaves 0 GPUs" in line_of(out, "a100-80gb")
    assert "no PREEMPTIBLE_NVIDIA_A100_80GB_GPUS quota: Spot VMs count against NVIDIA_A100_80GB_GPUS" in out


def test_pools_sharing_a_metric_share_its_headroom(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a100-80gb-b"] = copy.deepcopy(raw["nodePools"]["a100-80gb"])
    raw["computeClasses"]["gpus"]["pools"].append("a100-80gb-b")
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=1)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert verdicts(out) == {"a100-80gb": "NOT SERVED", "a100-80gb-b": "NOT SERVED"}
    assert "pools a100-80gb, a100-80gb-b share NVIDIA_A100_80GB_GPUS in us-central1: together they need 2 GPUs " \
           "at min nodes, 1 left" in out


def test_tpu_pools_need_only_their_machine_type_and_say_which_quota_to_check(fake, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"] = {
        "v5e": {"machineType": "ct5lp-hightpu-4t", "accelerator": {"type": "tpu-v5-lite-podslice", "count": 4},
                "autoscaling": {"min": 1, "max": 2}, "zones": ["us-central1-a"]},
        "v6e": {"machineType": "ct6e-standard-1t", "accelerator": {"type": "tpu-v6e-slice", "count": 1},
                "autoscaling": {"min": 1, "max": 1}, "zones": ["us-central1-a"]},
    }
    raw["computeClasses"] = {}
    fake.offer("us-central1-a", "ct5lp-hightpu-4t")
    fake.offer("us-central1-a", "ct6e-standard-1t")
    fake.set_quota(REGION, "PREEMPTIBLE_TPU_LITE_PODSLICE_V5", limit=8)
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0, out
    assert verdicts(out) == {"v5e": "SERVED", "v6e": "WARN"}
    assert "PREEMPTIBLE_TPU_LITE_PODSLICE_V5 headroom 8 covers max 2 nodes" in line_of(out, "v5e")
    assert "tpu-v6e-slice has no regions.get metric; console quota 'TPUs per TPU family' (tpu_family=CT6E)" \
        in line_of(out, "v6e")
    assert not any("acceleratorTypes" in p for _, p, _ in fake.requests)


def test_json_output_carries_the_same_findings(fake, tmp_path, capsys):
    offer_everywhere(fake, zones=("us-central1-c",))
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8, usage=1)
    code, out, _ = run(tmp_path, BASE, capsys, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["cloud"] == "gke" and report["project"] == "demo-project" and report["exit_code"] == 0
    (pool,) = report["pools"]
    assert pool["pool"] == "a100-80gb" and pool["verdict"] == "warn"
    assert pool["served_zones"] == ["us-central1-c"]
    assert [(z["zone"], z["offered"]) for z in pool["zones"]] == [("us-central1-a", False), ("us-central1-c", True)]
    assert pool["quotas"][0]["metric"] == "NVIDIA_A100_80GB_GPUS" and pool["quotas"][0]["headroom"] == 7.0


def test_disabled_compute_api_exits_2_with_the_command_to_enable_it(fake, tmp_path, capsys):
    fake.error = (403, api_disabled_body())
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 2 and out == ""
    assert err.startswith("preflight: the Compute Engine API is disabled in project demo-project")
    assert "gcloud services enable compute.googleapis.com --project demo-project" in err
    assert "Traceback" not in err


def test_missing_permission_exits_2_naming_the_permissions(fake, tmp_path, capsys):
    fake.error = (403, permission_denied_body("compute.regions.get", f"projects/demo-project/regions/{REGION}"))
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 2 and out == ""
    assert "Required 'compute.regions.get' permission for 'projects/demo-project/regions/us-central1'" in err
    assert "compute.machineTypes.get" in err and "compute.acceleratorTypes.get" in err


def test_rejected_token_exits_2(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "expired-token")
    code, _, err = run(tmp_path, BASE, capsys)
    assert code == 2 and "Google refused the request (401 UNAUTHENTICATED" in err


def test_unknown_project_or_missing_project_exits_2(fake, tmp_path, capsys, monkeypatch):
    code, _, err = run(tmp_path, BASE, capsys, project="other-project")
    assert code == 2 and "does not know region us-central1 in project other-project" in err
    code, _, err = run(tmp_path, BASE, capsys, project=None)
    assert code == 2 and "no GCP project: set gcp:project in Pulumi.pf.yaml" in err
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, _ = run(tmp_path, BASE, capsys, project=None)
    assert code == 0, out


def test_unreachable_endpoint_exits_2(fake, tmp_path, capsys, monkeypatch):
    with FakeCompute() as closed:
        url = closed.url
    monkeypatch.setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", url)
    code, _, err = run(tmp_path, BASE, capsys)
    assert code == 2 and "cannot reach the Compute Engine API" in err


def service_account_key(fake: FakeCompute, folder: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    email = "preflight@demo-project.iam.gserviceaccount.com"
    fake.service_accounts[email] = key.public_key()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = folder / "key.json"
    path.write_text(json.dumps({"type": "service_account", "project_id": "demo-project", "private_key_id": "k1",
                                "private_key": pem, "client_email": email, "client_id": "1",
                                "token_uri": fake.token_url}))
    return path


def test_service_account_key_in_google_application_credentials(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_key(fake, tmp_path)))
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 0, out + err
    assert [m for m, p, _ in fake.requests if p == "/token"] == ["POST"]  # one signed-JWT exchange
    issued = {h.get("Authorization") for m, _, h in fake.requests if m == "GET"}
    assert len(issued) == 1 and issued.pop().startswith("Bearer issued-")
    assert "credentials: Application Default Credentials" in out and "key.json" in out


def test_gcloud_application_default_credentials_refresh_at_the_token_endpoint(fake, tmp_path, capsys, monkeypatch):
    import google.oauth2.credentials

    # google-auth sends authorized_user refreshes to Google's endpoint whatever the file says; point it here.
    monkeypatch.setattr(google.oauth2.credentials, "_GOOGLE_OAUTH2_TOKEN_ENDPOINT", fake.token_url)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # google-auth would ask a local gcloud for the project
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN")
    adc = tmp_path / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir()
    adc.write_text(json.dumps({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
                               "client_secret": "s", "refresh_token": "rt-1", "quota_project_id": "demo-project"}))
    fake.refresh_tokens["rt-1"] = "cid.apps.googleusercontent.com"
    offer_everywhere(fake)
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=8)
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 0, out + err
    gets = [h for m, _, h in fake.requests if m == "GET"]
    assert gets and all(h["Authorization"].startswith("Bearer issued-") for h in gets)
    assert all(h.get("X-Goog-User-Project") == "demo-project" for h in gets)
    fake.refresh_tokens.clear()  # a revoked refresh token
    code, _, err = run(tmp_path, BASE, capsys)
    assert code == 2 and "could not get a Google access token: invalid_grant" in err


def test_no_credentials_exit_2(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN")
    code, out, err = run(tmp_path, BASE, capsys)
    assert code == 2 and out == ""
    assert err.startswith("preflight: no Google credentials found")
    assert "gcloud auth application-default login" in err and "make preflight STACK=pf" in err
    assert not fake.requests


# --- `make preflight` end to end, as a user runs it ----------------------------------------------


def make_env(fake: FakeCompute, tmp_path: Path, token: str | None = "test-token") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GOOGLE_", "CLOUDSDK_", "MAKE", "MFLAGS"))}
    env.update(CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=fake.url, CLOUDSDK_CONFIG=str(tmp_path / "no-gcloud"),
               NO_GCE_CHECK="true", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if token:
        env["GOOGLE_OAUTH_ACCESS_TOKEN"] = token
    return env


def dev_scenario(fake: FakeCompute, name: str) -> None:
    """The shipped dev stack: a100-80gb (on-demand, us-central1-c), a100-40gb (spot, c), tpu-v6e (b)."""
    if name != "not-offered":
        fake.offer("us-central1-c", "a2-ultragpu-1g")
    fake.offer("us-central1-c", "a2-highgpu-2g")
    fake.offer("us-central1-b", "ct6e-standard-1t")
    fake.set_quota(REGION, "NVIDIA_A100_80GB_GPUS", limit=0 if name == "quota-too-small" else 16)
    fake.set_quota(REGION, "PREEMPTIBLE_NVIDIA_A100_GPUS", limit=16)


def test_make_preflight_dev_end_to_end(tmp_path):
    """`make preflight STACK=dev` in subprocesses (run side by side) against one fake Compute API each."""
    scenarios = ("served", "not-offered", "quota-too-small", "no-credentials", "json")
    fakes = {name: FakeCompute().__enter__() for name in scenarios}
    try:
        procs = {}
        for name, fake in fakes.items():
            dev_scenario(fake, name)
            env = make_env(fake, tmp_path, token=None if name == "no-credentials" else "test-token")
            args = ["make", "--no-print-directory", "preflight", "STACK=dev", *(["JSON=1"] if name == "json" else [])]
            procs[name] = subprocess.Popen(args, cwd=ROOT, env=env, text=True,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        results = {name: (p.wait(timeout=HANG_GUARD_SECONDS), *p.communicate()) for name, p in procs.items()}
    finally:
        for fake in fakes.values():
            fake.__exit__(None, None, None)

    code, out, err = results["served"]
    assert code == 0, out + err
    assert verdicts(out) == {"a100-80gb": "SERVED", "a100-40gb": "SERVED", "tpu-v6e": "WARN"}
    assert "credentials: GOOGLE_OAUTH_ACCESS_TOKEN" in out

    for name, reason in (("not-offered", "a2-ultragpu-1g not offered in us-central1-c"),
                         ("quota-too-small", "quota NVIDIA_A100_80GB_GPUS in us-central1 leaves 0 GPUs")):
        code, out, err = results[name]
        assert code == 2, (name, out, err)  # make turns the preflight's exit 1 into its own 2
        assert verdicts(out)["a100-80gb"] == "NOT SERVED" and reason in line_of(out, "a100-80gb")
        assert verdicts(out)["a100-40gb"] == "SERVED"

    code, out, err = results["no-credentials"]
    assert code == 2 and "preflight: no Google credentials found" in err and "Traceback" not in err

    code, out, err = results["json"]
    assert code == 0, err
    report = json.loads(out[out.index("{"):])
    assert {p["pool"]: p["verdict"] for p in report["pools"]} == {
        "a100-80gb": "served", "a100-40gb": "served", "tpu-v6e": "warn"}

