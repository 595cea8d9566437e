"""The EKS preflight against hostile AWS answers (tests/hostile_replies.py), through botocore's real parsers.

EC2 runs on moto; a ``before-send`` hook on the client the preflight makes answers one operation with
the row's raw HTTP answer (XML for EC2, JSON 1.1 for Service Quotas), so botocore parses it as it
would a real one (a truncated EC2 answer raises its ResponseParserError). Service Quotas, which moto
does not serve for EC2 codes, gets a well-formed answer from the same hook unless a row replaces it.
A "trickling" row blocks the send until the test ends: only the preflight's deadline stops it.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from preflight.__main__ import main
from tests.hostile_replies import HOSTILE_REPLIES, HTML_PAGE, TEST_POLICY, HostileReply, names_call, policy_for
from tests.preflight_output import line_of, verdicts

STACK = {
    "cluster": {"cloud": "eks", "name": "pf", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2b"]},
    "nodePools": {"l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1},
                           "spot": False, "onDemandFallback": True}},
    "computeClasses": {"gpus": {"pools": ["l40s"]}},
}
ON_DEMAND_G = "L-DB2E81BA"
EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
#: g6e.xlarge as EC2 describes it (the figures moto ships, and aws.amazon.com/ec2/instance-types/g6e).
INSTANCE_TYPES_XML = (
    f'<DescribeInstanceTypesResponse xmlns="{EC2_NS}"><requestId>r-1</requestId><instanceTypeSet><item>'
    "<instanceType>g6e.xlarge</instanceType><vCpuInfo><defaultVCpus>4</defaultVCpus></vCpuInfo>"
    "<memoryInfo><sizeInMiB>32768</sizeInMiB></memoryInfo><gpuInfo><gpus><item><name>L40S</name>"
    "<manufacturer>NVIDIA</manufacturer><count>1</count><memoryInfo><sizeInMiB>45776</sizeInMiB></memoryInfo>"
    "</item></gpus></gpuInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>")
QUOTA = {"Quota": {"ServiceCode": "ec2", "QuotaCode": ON_DEMAND_G, "QuotaName": "Running On-Demand G and VT instances",
                   "Value": 64.0, "Unit": "None", "Adjustable": True, "GlobalQuota": False}}
EC2_ERRORS = {403: ("UnauthorizedOperation", "You are not authorized to perform this operation."),
              429: ("RequestLimitExceeded", "Request limit exceeded."),
              502: ("InternalError", "An internal error has occurred."),
              503: ("Unavailable", "The server is overloaded and cannot handle the request.")}
QUOTA_ERRORS = {403: "AccessDeniedException", 429: "TooManyRequestsException", 502: "ServiceException",
                503: "ServiceException"}


class RawBody:
    def __init__(self, data: bytes):
        self.data = data

    def stream(self, **_: Any):
        yield self.data


def ec2_bodies(row: HostileReply) -> dict[str, bytes]:
    good = INSTANCE_TYPES_XML.encode()
    code, message = EC2_ERRORS.get(row.status, ("InternalError", "error"))
    error = (f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors>"
             "<RequestID>r-2</RequestID></Response>").encode()
    return {"answer": good, "truncated": good[: len(good) // 2], "list": b'[{"InstanceTypes": []}]',
            "non-numeric": good.replace(b"<defaultVCpus>4<", b"<defaultVCpus>four<"), "html": HTML_PAGE,
            "empty": b"", "error": error}


def quota_bodies(row: HostileReply) -> dict[str, bytes]:
    good = json.dumps(QUOTA).encode()
    bad_value = json.loads(good)
    bad_value["Quota"]["Value"] = "lots"
    error = {"__type": QUOTA_ERRORS.get(row.status, "ServiceException"), "message": "refused or unavailable"}
    return {"answer": good, "truncated": good[: len(good) // 2], "list": json.dumps([QUOTA]).encode(),
            "non-numeric": json.dumps(bad_value).encode(), "html": HTML_PAGE, "empty": b"",
            "error": json.dumps(error).encode()}


class Wire:
    """Raw answers for (service, operation); None lets moto answer. Installed on every client the run makes."""

    def __init__(self) -> None:
        self.scripts: dict[tuple[str, str], list[HostileReply]] = {}
        self.seen: list[tuple[str, str]] = []
        self.release = threading.Event()

    def hostile(self, service: str, operation: str, row: HostileReply) -> None:
        self.scripts[(service, operation)] = [row, HostileReply("answer")] if row.recovers else [row]

    def answer(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        _, service, operation = event_name.split(".")
        self.seen.append((service, operation))
        rows = self.scripts.get((service, operation)) or self.scripts.get((service, "*"))
        if rows is None:
            if service == "service-quotas":
                return AWSResponse(request.url, 200, {}, RawBody(json.dumps(QUOTA).encode()))
            return None
        row = rows.pop(0) if len(rows) > 1 else rows[0]
        if row.trickle:
            self.release.wait(30)  # an answer that never completes
            return AWSResponse(request.url, 200, {}, RawBody(b""))
        bodies = quota_bodies(row) if service == "service-quotas" else ec2_bodies(row)
        if service == "ec2" and row.body == "answer" and operation != "DescribeInstanceTypes":
            return None  # the good answer of other EC2 operations: moto's
        status = 400 if service == "service-quotas" and row.status in (403, 429) else row.status
        headers = {"Retry-After": row.retry_after} if row.retry_after is not None else {}
        return AWSResponse(request.url, status, headers, RawBody(bodies[row.body]))


@pytest.fixture(scope="module")
def moto_ec2():
    with pytest.MonkeyPatch.context() as patch:
        for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                           "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-west-2"}.items():
            patch.setenv(key, value)
        with mock_aws():
            ec2 = boto3.client("ec2", region_name="us-west-2")  # moto builds its EC2 data on first use (~1 s)
            ec2.describe_instance_types(InstanceTypes=["g6e.xlarge"])
            yield


@pytest.fixture
def wire(moto_ec2, monkeypatch):
    found = Wire()
    real_client = boto3.client

    def client(service: str, *args: Any, **kwargs: Any) -> Any:
        made = real_client(service, *args, **kwargs)
        made.meta.events.register_first("before-send.*", found.answer)
        return made

    monkeypatch.setattr(boto3, "client", client)
    yield found
    found.release.set()


def run(tmp_path: Path, capsys, row: HostileReply | None = None) -> tuple[int, str, str]:
    doc = {"config": {f"gpu-fungibility:{k}": v for k, v in STACK.items()}}
    (tmp_path / "Pulumi.pf.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    code = main(["--stack", "pf", "--stack-dir", str(tmp_path)], policy=policy_for(row) if row else TEST_POLICY)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_clean_run_is_served(wire, tmp_path, capsys):
    code, out, err = run(tmp_path, capsys)
    assert code == 0, out + err
    assert verdicts(out) == {"l40s": "SERVED"}
    assert re.search(r"L-DB2E81BA +Running On-Demand G and VT instances +on-demand +64 +applied", out)


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_service_quotas_answering_badly_is_a_warning_and_the_offerings_are_still_reported(wire, tmp_path, capsys,
                                                                                       row):
    wire.hostile("service-quotas", "GetServiceQuota", row)
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    tries = wire.seen.count(("service-quotas", "GetServiceQuota"))
    if row.recovers:
        assert verdicts(out) == {"l40s": "SERVED"} and tries == 2
        return
    assert verdicts(out) == {"l40s": "WARN"}
    assert names_call(line_of(out, "l40s"), "vCPU quota L-DB2E81BA not checked: servicequotas:GetServiceQuota",
                      row.kind), out
    assert "1 x NVIDIA L40S 45776 MiB" in out and "us-west-2a, us-west-2b" in out
    assert tries <= TEST_POLICY.attempts


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_describe_instance_types_answering_badly_leaves_the_shape_not_checked(wire, tmp_path, capsys, row):
    wire.hostile("ec2", "DescribeInstanceTypes", row)
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    if row.recovers:
        assert verdicts(out) == {"l40s": "SERVED"}
        return
    assert verdicts(out) == {"l40s": "WARN"}
    assert names_call(line_of(out, "l40s"), "shape not checked: ec2:DescribeInstanceTypes", row.kind), out
    assert re.search(r"l40s +g6e.xlarge +not read .* not checked", out)
    assert re.search(r"L-DB2E81BA .* 64 ", out) is None  # no vCPUs known: the quota is not judged


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_offerings_answering_badly_leave_their_zones_not_checked(wire, tmp_path, capsys, row):
    wire.hostile("ec2", "DescribeInstanceTypeOfferings", row)
    code, out, err = run(tmp_path, capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    if row.recovers:
        assert verdicts(out) == {"l40s": "SERVED"}
        return
    assert verdicts(out) == {"l40s": "WARN"}  # never NOT SERVED: no zone was seen to refuse it
    line = line_of(out, "l40s")
    assert names_call(line, "offerings not checked in us-west-2a, us-west-2b: ec2:DescribeInstanceTypeOfferings",
                      row.kind), line
    assert "1 x NVIDIA L40S 45776 MiB" in out and re.search(r"L-DB2E81BA .* 64 ", out)


def test_every_call_answering_badly_means_nothing_could_be_checked(wire, tmp_path, capsys):
    for row in HOSTILE_REPLIES:
        if row.recovers:
            continue
        wire.scripts = {("ec2", "*"): [row], ("service-quotas", "*"): [row]}
        code, out, err = run(tmp_path, capsys, row)
        assert code == 2, (row.name, out, err)
        assert out == "" and "Traceback" not in err
        assert err.startswith("preflight: nothing could be checked: no call to AWS in us-west-2 was answered"), err
        assert names_call(err, "ec2:DescribeInstanceTypes", row.kind), (row.name, err)
