"""The EC2 capacity preflight against moto's EC2 (real per-AZ offerings and GpuInfo, no network).

Fake credentials exist only inside these tests (monkeypatch); the missing-credentials
case removes every credential source instead.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from gpu_fungibility import catalog
from moto import mock_aws

from preflight.__main__ import main

BASE = {
    "cluster": {"cloud": "eks", "name": "pf", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2d"]},
    "nodePools": {
        "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1}},
        "a10g-4x": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4}},
    },
    "computeClasses": {"gpus": {"pools": ["l40s", "a10g-4x"]}},
}


def write_stack(tmp_path: Path, raw: dict, stack: str = "pf") -> Path:
    doc = {"config": {f"gpu-fungibility:{k}": v for k, v in raw.items()}}
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


@pytest.fixture
def aws(monkeypatch):
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-west-2"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        yield


def run(tmp_path: Path, raw: dict, capsys) -> tuple[int, str, str]:
    code = main(["--stack", "pf", "--stack-dir", str(write_stack(tmp_path, raw))])
    out = capsys.readouterr()
    return code, out.out, out.err


def verdicts(out: str) -> dict[str, str]:
    found = {}
    for line in out.splitlines():
        if line.startswith(("SERVED", "NOT SERVED")):
            status, rest = line.split(None, 1) if line.startswith("SERVED") else ("NOT SERVED", line[11:].strip())
            found[rest.split(":", 1)[0]] = status
    return found


def test_pools_offered_in_their_zones_are_served(aws, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["cluster"]["zones"] = ["us-west-2a", "us-west-2b"]
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0, out
    assert verdicts(out) == {"l40s": "SERVED", "a10g-4x": "SERVED"}
    assert "SERVED      l40s: us-west-2a, us-west-2b" in out
    assert "1 x NVIDIA L40S 45776 MiB" in out and "4 x NVIDIA A10G 22888 MiB" in out


def test_instance_type_not_offered_in_the_pools_zone_fails(aws, tmp_path, capsys):
    # moto's us-west-2d offers g6e.xlarge but not g5.12xlarge.
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a10g-4x"]["zones"] = ["us-west-2d"]
    raw["nodePools"]["l40s"]["zones"] = ["us-west-2d"]
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1, out
    assert verdicts(out) == {"l40s": "SERVED", "a10g-4x": "NOT SERVED"}
    row = next(line for line in out.splitlines() if line.startswith("a10g-4x"))
    assert "none of us-west-2d" in row


def test_other_zone_serves_a_pool_without_zones(aws, tmp_path, capsys):
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 0, out
    assert "SERVED      a10g-4x: us-west-2a" in out


def test_gpu_count_mismatch_with_the_catalog_is_not_served(aws, tmp_path, capsys, monkeypatch):
    # The project's catalog claims 8 GPUs on g5.12xlarge; EC2 (moto's data) reports 4.
    wrong = catalog.MachineShape("g5.12xlarge", "nvidia-a10g", 8, "eks")
    monkeypatch.setitem(catalog.EKS_INSTANCES, "g5.12xlarge", wrong)
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a10g-4x"]["accelerator"]["count"] = 8
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1, out
    assert verdicts(out)["a10g-4x"] == "NOT SERVED"
    row = next(line for line in out.splitlines() if line.startswith("a10g-4x"))
    assert "MISMATCH: 4 GPUs, catalog says 8" in row


def test_gpu_model_and_memory_mismatch_are_reported(aws, tmp_path, capsys, monkeypatch):
    # moto's EC2 data altered to report an L4 for g6e.xlarge, which the catalog says carries an L40S.
    from moto.ec2.models.instance_types import InstanceTypeBackend

    entry = next(t for t in InstanceTypeBackend.instance_types if t.name == "g6e.xlarge")
    gpu_info = copy.deepcopy(entry["GpuInfo"])
    gpu_info["Gpus"][0].update({"Name": "L4", "MemoryInfo": {"SizeInMiB": 22888}})
    monkeypatch.setitem(entry, "GpuInfo", gpu_info)
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 1, out
    row = next(line for line in out.splitlines() if line.startswith("l40s"))
    assert "model L4, catalog says NVIDIA L40S" in row
    assert "22888 MiB per GPU, catalog says 48 GiB" in row


def test_missing_credentials_give_one_clear_message(tmp_path, capsys, monkeypatch):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    code, out, err = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("preflight: no AWS credentials found")
    assert "aws sso login" in err and "make preflight STACK=pf" in err
    assert "Traceback" not in err


def test_gke_stack_and_invalid_config_are_refused_cleanly(tmp_path, capsys):
    assert main(["--stack", "dev"]) == 2
    assert "checks EC2" in capsys.readouterr().err
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["l40s"]["instanceTypes"] = ["g5.xlarge"]
    code, _, err = run(tmp_path, raw, capsys)
    assert code == 2 and "nodePools.l40s.instanceTypes[0]" in err and "Traceback" not in err


def test_shipped_eks_dev_stack_is_served_on_moto(aws, capsys):
    assert main(["--stack", "eks-dev"]) == 0, capsys.readouterr().out
