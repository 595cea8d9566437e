"""The EKS capacity preflight: EC2 on moto (real per-AZ offerings, GpuInfo and vCPUs, no network),
Service Quotas and Spot placement scores on botocore's Stubber (moto implements neither for EC2
quotas; the Stubber checks every request and response against the real service models).

Fake credentials exist only inside these tests (monkeypatch); the missing-credentials
case removes every credential source instead.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import Stubber
from gpu_fungibility import catalog
from gpu_fungibility.clouds.eks import machines as eks_machines
from moto import mock_aws

from preflight.__main__ import main
from tests.preflight_output import line_of, verdicts

BASE = {
    "cluster": {"cloud": "eks", "name": "pf", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2d"]},
    "nodePools": {
        "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1}},
        "a10g-4x": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4}},
    },
    "computeClasses": {"gpus": {"pools": ["l40s", "a10g-4x"]}},
}
G_SPOT, G_ON_DEMAND, P_SPOT = "L-3819A6DF", "L-DB2E81BA", "L-7212CCBC"
QUOTA_NAMES = {G_SPOT: "All G and VT Spot Instance Requests", G_ON_DEMAND: "Running On-Demand G and VT instances",
               P_SPOT: "All P Spot Instance Requests"}
ZONE_IDS = {"us-west-2a": "usw2-az2", "us-west-2b": "usw2-az1", "us-west-2c": "usw2-az3", "us-west-2d": "usw2-az4"}


def write_stack(tmp_path: Path, raw: dict, stack: str = "pf") -> Path:
    doc = {"config": {f"gpu-fungibility:{k}": v for k, v in raw.items()}}
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return tmp_path


class RoutedEc2:
    """moto's EC2 client, except the operations moto lacks, which go to a Stubber-checked client."""

    def __init__(self, moto_client: Any, stubbed: Any, operations: set[str]):
        self._moto, self._stubbed, self._operations = moto_client, stubbed, operations

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stubbed if name in self._operations else self._moto, name)


class AwsStubs:
    """Expected Service Quotas and GetSpotPlacementScores calls, in the order the preflight makes them."""

    def __init__(self, monkeypatch):
        real_client = boto3.client
        self.quotas_client = real_client("service-quotas", region_name="us-west-2")
        self.spot_client = real_client("ec2", region_name="us-west-2")
        self.quotas, self.spot = Stubber(self.quotas_client), Stubber(self.spot_client)
        self.quotas.activate()
        self.spot.activate()

        def client(service: str, *args: Any, **kwargs: Any) -> Any:
            if service == "service-quotas":
                return self.quotas_client
            made = real_client(service, *args, **kwargs)
            return RoutedEc2(made, self.spot_client, {"get_spot_placement_scores"}) if service == "ec2" else made

        monkeypatch.setattr(boto3, "client", client)

    def quota(self, code: str, value: float | None, *, default: bool = False) -> None:
        body = {"Quota": {"ServiceCode": "ec2", "QuotaCode": code, "QuotaName": QUOTA_NAMES.get(code, code),
                          "Value": value, "Unit": "None", "Adjustable": True, "GlobalQuota": False}}
        params = {"ServiceCode": "ec2", "QuotaCode": code}
        if default:
            self.quotas.add_client_error("get_service_quota", "NoSuchResourceException",
                                         "The request failed because the specified service quota does not exist.",
                                         expected_params=params)
            self.quotas.add_response("get_aws_default_service_quota", body, params)
        else:
            self.quotas.add_response("get_service_quota", body, params)

    def scores(self, instance_types: list[str], target: int, by_zone: dict[str, int]) -> None:
        params = {"InstanceTypes": instance_types, "TargetCapacity": target, "TargetCapacityUnitType": "units",
                  "SingleAvailabilityZone": True, "RegionNames": ["us-west-2"]}
        self.spot.add_response("get_spot_placement_scores", {"SpotPlacementScores": [
            {"Region": "us-west-2", "AvailabilityZoneId": ZONE_IDS[z], "Score": s} for z, s in by_zone.items()]},
            params)

    def base(self, vcpus: float = 1000, scores: bool = True) -> None:
        """BASE: both pools are Spot G pools (one quota); each served pool gets one score request."""
        self.quota(G_SPOT, vcpus)
        if scores:
            self.scores(["g6e.xlarge"], 1, {"us-west-2a": 9, "us-west-2d": 3})
            self.scores(["g5.12xlarge"], 1, {"us-west-2a": 6})

    def assert_done(self) -> None:
        self.quotas.assert_no_pending_responses()
        self.spot.assert_no_pending_responses()


@pytest.fixture(scope="module")
def moto_ec2():
    """One moto session for the module: its EC2 backend takes about a second to build, and tests only read it."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                           "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-west-2"}.items():
            patch.setenv(key, value)
        with mock_aws():
            yield


@pytest.fixture
def aws(moto_ec2, monkeypatch):
    return AwsStubs(monkeypatch)


def run(tmp_path: Path, raw: dict, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["--stack", "pf", "--stack-dir", str(write_stack(tmp_path, raw)), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def without_offerings(monkeypatch, instance_type: str, zones: set[str]) -> None:
    """Take ``instance_type`` out of moto's us-west-2 offerings in ``zones``."""
    from moto.ec2.models import instance_types

    table = instance_types.INSTANCE_TYPE_OFFERINGS["availability-zone"]
    kept = [o for o in table["us-west-2"] if not (o["InstanceType"] == instance_type and o["Location"] in zones)]
    monkeypatch.setitem(table, "us-west-2", kept)


def test_pools_offered_in_their_zones_are_served(aws, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["cluster"]["zones"] = ["us-west-2a", "us-west-2b"]
    aws.quota(G_SPOT, 1000)
    aws.scores(["g6e.xlarge"], 1, {"us-west-2a": 9, "us-west-2b": 3})
    aws.scores(["g5.12xlarge"], 1, {"us-west-2b": 6})
    code, out, err = run(tmp_path, raw, capsys)
    assert code == 0, out + err
    assert verdicts(out) == {"l40s": "SERVED", "a10g-4x": "SERVED"}
    assert "SERVED      l40s: us-west-2a, us-west-2b" in out
    assert "1 x NVIDIA L40S 45776 MiB" in out and "4 x NVIDIA A10G 22888 MiB" in out
    assert "L-3819A6DF  All G and VT Spot Instance Requests  spot   1000   applied" in out
    assert "l40s: 4 / 0 / 4, a10g-4x: 48 / 0 / 48" in out
    assert "us-west-2a 9, us-west-2b 3" in out and "us-west-2a -, us-west-2b 6" in out
    aws.assert_done()


def test_instance_type_not_offered_in_the_pools_zone_fails(aws, tmp_path, capsys):
    # moto's us-west-2d offers g6e.xlarge but not g5.12xlarge.
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a10g-4x"]["zones"] = ["us-west-2d"]
    raw["nodePools"]["l40s"]["zones"] = ["us-west-2d"]
    aws.quota(G_SPOT, 1000)
    aws.scores(["g6e.xlarge"], 1, {"us-west-2d": 5})
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1, out
    assert verdicts(out) == {"l40s": "SERVED", "a10g-4x": "NOT SERVED"}
    row = next(line for line in out.splitlines() if line.startswith("a10g-4x"))
    assert "none of us-west-2d" in row
    aws.assert_done()


def test_pool_offered_in_some_of_its_zones_warns(aws, tmp_path, capsys):
    aws.base()
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 0, out
    assert verdicts(out) == {"l40s": "SERVED", "a10g-4x": "WARN"}
    assert "only us-west-2a of us-west-2a, us-west-2d offer a matching instance type" in line_of(out, "a10g-4x")


def test_gpu_count_mismatch_with_the_catalog_is_not_served(aws, tmp_path, capsys, monkeypatch):
    # The project's catalog claims 8 GPUs on g5.12xlarge; EC2 (moto's data) reports 4.
    wrong = catalog.MachineShape("g5.12xlarge", "nvidia-a10g", 8, "eks")
    monkeypatch.setitem(eks_machines.MACHINES, "g5.12xlarge", wrong)
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a10g-4x"]["accelerator"]["count"] = 8
    aws.quota(G_SPOT, 1000)
    aws.scores(["g6e.xlarge"], 1, {})
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
    aws.quota(G_SPOT, 1000)
    aws.scores(["g5.12xlarge"], 1, {})
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 1, out
    row = next(line for line in out.splitlines() if line.startswith("l40s"))
    assert "model L4, catalog says NVIDIA L40S" in row
    assert "22888 MiB per GPU, catalog says 48 GiB" in row


def test_vcpu_quota_below_one_node_is_not_served(aws, tmp_path, capsys):
    aws.base(vcpus=32)
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 1, out
    assert verdicts(out) == {"l40s": "WARN", "a10g-4x": "NOT SERVED"}
    assert "L-3819A6DF (All G and VT Spot Instance Requests) is 32 vCPUs; one g5.12xlarge needs 48" \
        in line_of(out, "a10g-4x")
    assert "pools l40s, a10g-4x share L-3819A6DF: together they would need 52 vCPUs at max nodes" \
        in line_of(out, "l40s")


def test_vcpu_quota_below_min_nodes_is_not_served_and_max_beyond_it_warns(aws, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["a10g-4x"]["autoscaling"] = {"min": 2, "max": 2}
    aws.quota(G_SPOT, 60)
    aws.scores(["g6e.xlarge"], 1, {})
    aws.scores(["g5.12xlarge"], 2, {})
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert "is 60 vCPUs; min 2 x g5.12xlarge need 96" in line_of(out, "a10g-4x")

    raw["nodePools"]["a10g-4x"]["autoscaling"] = {"min": 1, "max": 3}
    aws.quota(G_SPOT, 100)
    aws.scores(["g6e.xlarge"], 1, {})
    aws.scores(["g5.12xlarge"], 3, {})
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 0, out
    assert verdicts(out)["a10g-4x"] == "WARN"
    assert "is 100 vCPUs; max 3 x g5.12xlarge would need 144" in line_of(out, "a10g-4x")
    aws.assert_done()


def test_on_demand_pools_use_the_on_demand_quota_and_its_default_value(aws, tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["l40s"].update(spot=False, onDemandFallback=True)
    aws.quota(G_SPOT, 1000)  # quota codes are looked up in sorted order
    aws.quota(G_ON_DEMAND, 0, default=True)  # no applied value: the default (0 for new accounts)
    aws.scores(["g5.12xlarge"], 1, {})
    code, out, _ = run(tmp_path, raw, capsys)
    assert code == 1
    assert "L-DB2E81BA (Running On-Demand G and VT instances) is 0 vCPUs; one g6e.xlarge needs 4" \
        in line_of(out, "l40s")
    assert "L-DB2E81BA  Running On-Demand G and VT instances  on-demand  0      default" in out
    aws.assert_done()


def test_quota_access_denied_is_a_warning_and_every_other_check_is_still_reported(aws, tmp_path, capsys):
    aws.quotas.add_client_error("get_service_quota", "AccessDeniedException", "not authorized",
                                http_status_code=400)
    aws.scores(["g6e.xlarge"], 1, {"us-west-2a": 9})
    aws.scores(["g5.12xlarge"], 1, {"us-west-2a": 6})
    code, out, err = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 0, out + err
    assert verdicts(out) == {"l40s": "WARN", "a10g-4x": "WARN"}
    assert "vCPU quota L-3819A6DF not checked: servicequotas:GetServiceQuota: access denied " \
           "(AccessDeniedException: not authorized) (needs servicequotas:GetServiceQuota)" in line_of(out, "l40s")
    assert "1 x NVIDIA L40S 45776 MiB" in out and "us-west-2a 9" in out  # offerings, shapes, scores still there
    assert err == "" and "Traceback" not in out
    aws.assert_done()

    aws.quota(G_SPOT, 1000)
    aws.spot.add_client_error("get_spot_placement_scores", "UnauthorizedOperation", "not authorized")
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 0, out
    assert "Spot placement scores not read (ec2:GetSpotPlacementScores: access denied (UnauthorizedOperation: " \
           "not authorized) (needs ec2:GetSpotPlacementScores))" in out


def test_json_output(aws, tmp_path, capsys):
    aws.base()
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["cloud"] == "eks" and report["exit_code"] == 0
    pools = {p["pool"]: p for p in report["pools"]}
    assert pools["l40s"]["verdict"] == "served" and pools["a10g-4x"]["verdict"] == "warn"
    assert pools["l40s"]["spot_scores"] == {"us-west-2a": 9, "us-west-2d": 3}
    assert report["vcpu_quotas"] == [{"code": G_SPOT, "name": QUOTA_NAMES[G_SPOT], "spot": True, "value": 1000.0,
                                      "source": "applied", "pools": ["l40s", "a10g-4x"], "error": ""}]


def test_missing_credentials_give_one_clear_message(tmp_path, capsys, monkeypatch):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # forget credentials an earlier test resolved
    for stack_args in (["--stack", "pf", "--stack-dir", str(write_stack(tmp_path, copy.deepcopy(BASE)))],
                       ["--stack", "eks-dev"]):
        code = main(stack_args)
        out, err = capsys.readouterr()
        assert code == 2
        assert out == ""
        assert err.startswith("preflight: no AWS credentials found")
        assert "aws sso login" in err and f"make preflight STACK={stack_args[1]}" in err
        assert "Traceback" not in err


def test_invalid_config_is_refused_cleanly(tmp_path, capsys):
    raw = copy.deepcopy(BASE)
    raw["nodePools"]["l40s"]["instanceTypes"] = ["g5.xlarge"]
    code, _, err = run(tmp_path, raw, capsys)
    assert code == 2 and "nodePools.l40s.instanceTypes[0]" in err and "Traceback" not in err


def eks_dev_expectations(aws: AwsStubs, vcpus: float, served: tuple[str, ...]) -> None:
    """eks-dev: l40s (g6e.xlarge), a10g-4x (g5.12xlarge, g5.24xlarge), t4-classic (g4dn.xlarge), all Spot G."""
    aws.quota(G_SPOT, vcpus)
    for pool, types, target in (("l40s", ["g6e.xlarge"], 2), ("a10g-4x", ["g5.12xlarge", "g5.24xlarge"], 2),
                                ("t4-classic", ["g4dn.xlarge"], 1)):
        if pool in served:
            aws.scores(types, target, {"us-west-2b": 7})


@pytest.mark.parametrize(("scenario", "code", "expected"), [
    ("served", 0, {"l40s": "SERVED", "a10g-4x": "SERVED", "t4-classic": "SERVED"}),
    ("partly served", 0, {"l40s": "WARN", "a10g-4x": "SERVED", "t4-classic": "SERVED"}),
    ("not offered", 1, {"l40s": "NOT SERVED", "a10g-4x": "SERVED", "t4-classic": "SERVED"}),
    ("quota too small", 1, {"l40s": "NOT SERVED", "a10g-4x": "NOT SERVED", "t4-classic": "NOT SERVED"}),
])
def test_shipped_eks_dev_stack(aws, capsys, monkeypatch, scenario, code, expected):
    if scenario == "partly served":
        without_offerings(monkeypatch, "g6e.xlarge", {"us-west-2c"})
    if scenario == "not offered":
        without_offerings(monkeypatch, "g6e.xlarge", {"us-west-2a", "us-west-2b", "us-west-2c"})
    served = tuple(p for p, v in expected.items() if v != "NOT SERVED" or scenario == "quota too small")
    eks_dev_expectations(aws, 2 if scenario == "quota too small" else 1000, served)
    assert main(["--stack", "eks-dev"]) == code
    out = capsys.readouterr().out
    assert verdicts(out) == expected, out
    aws.assert_done()


def test_live_instance_shape_that_differs_from_the_catalog_is_a_warning(aws, tmp_path, capsys, monkeypatch):
    # moto's EC2 data altered so g6e.xlarge reports 8 GiB less memory than the catalog holds.
    from moto.ec2.models.instance_types import InstanceTypeBackend

    host = catalog.host_shape("g6e.xlarge")
    entry = next(t for t in InstanceTypeBackend.instance_types if t.name == "g6e.xlarge")
    live_mib = round(host.memory_gib * 1024) - 8192
    monkeypatch.setitem(entry, "MemoryInfo", {"SizeInMiB": live_mib})
    aws.base()
    code, out, _ = run(tmp_path, copy.deepcopy(BASE), capsys)
    assert code == 0, out
    assert verdicts(out)["l40s"] == "WARN"
    assert f"g6e.xlarge: EC2 says {live_mib / 1024:g} GiB, the catalog {host.memory_gib:g} GiB" \
        in line_of(out, "l40s")
