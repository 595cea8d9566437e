"""The AKS preflight against hostile Resource Manager answers (tests/hostile_replies.py), over real HTTP.

Each row of the shared table is served by the local Resource Manager (tests/azure_fake.py) for one call at a
time: the Compute usages list (quotas "not checked", a warning naming the call, the SKU checks still
reported), the Resource SKUs list (offering "not checked", the regional and Spot quotas still checked with
the catalog's vCPUs), and every call at once (nothing could be checked: exit 2). Bodies are Resource
Manager's: JSON lists under ``value`` and ``{"error": {"code", "message"}}`` documents.
"""

from __future__ import annotations

import json

import pytest

from preflight import azure_api
from preflight.__main__ import main
from tests.azure_fake import SUBSCRIPTION, TOKEN, AzureFake, authorization_failed, sku, usage
from tests.compute_fake import Reply
from tests.hostile_replies import (
    HOSTILE_REPLIES,
    TEST_POLICY,
    HostileReply,
    names_call,
    policy_for,
    scripted_replies,
)
from tests.preflight_output import line_of, verdicts

REGION = "eastus2"
SIZES = ("Standard_NC24ads_A100_v4", "Standard_NC8as_T4_v3", "Standard_NC4as_T4_v3")
SKUS_PATH = r"/providers/Microsoft\.Compute/skus\?"
USAGES_PATH = rf"/locations/{REGION}/usages\?"
SKUS_CALL = f"Resource SKUs list {REGION}"
USAGES_CALL = f"Compute usages list {REGION}"
ALL_SERVED = {"a100spot": "SERVED", "a100od": "SERVED", "t4spot": "SERVED", "t4classic": "SERVED"}


class _Token:
    token = TOKEN


class _Credential:
    def get_token(self, *scopes: str) -> _Token:
        return _Token()


@pytest.fixture
def fake(monkeypatch):
    server = AzureFake(
        region=REGION, skus=[sku(s, REGION) for s in SIZES], page_size=10,
        usages=[usage("cores", 350), usage("standardNCADSA100v4Family", 100), usage("standardNCASv3_T4Family", 64),
                usage("lowPriorityCores", 200)],
    ).start()
    monkeypatch.setenv(azure_api.ENDPOINT_ENV, server.url)
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", SUBSCRIPTION)
    monkeypatch.setattr(azure_api, "default_credential", _Credential)
    yield server
    server.stop()


def run(capsys, row: HostileReply | None = None) -> tuple[int, str, str]:
    code = main(["--stack", "aks-dev"], policy=policy_for(row) if row else TEST_POLICY)
    out = capsys.readouterr()
    return code, out.out, out.err


def replies(row: HostileReply, good: dict, figures: list[tuple[str, ...]]) -> list[Reply]:
    """The row as Resource Manager answers: ``good`` is the real answer, ``figures`` the paths to numbers in it."""
    return scripted_replies(row, good, figures, json.dumps(_error(row.status)).encode(), Reply)


def _error(status: int) -> dict:
    """Resource Manager's error documents (learn.microsoft.com/azure/azure-resource-manager/management/
    request-limits-and-throttling: 429 TooManyRequests; troubleshooting: 403 AuthorizationFailed)."""
    if status == 403:
        return authorization_failed("Microsoft.Compute/skus/read")
    if status == 429:
        return {"error": {"code": "TooManyRequests", "message": "The request is being throttled."}}
    return {"error": {"code": "ServiceUnavailable", "message": "The service is temporarily unavailable."}}


def usages_body(fake: AzureFake) -> dict:
    return {"value": fake.usages}


def skus_body(fake: AzureFake) -> dict:
    return {"value": fake.skus}


def hits(fake: AzureFake, part: str) -> int:
    import re

    return sum(1 for path in fake.requests if re.search(part, path))


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_usages_answering_badly_leave_the_quotas_unchecked_and_the_offering_checked(fake, capsys, row):
    fake.script(USAGES_PATH, *replies(row, usages_body(fake), [("value", "0", "limit")]))
    code, out, err = run(capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 0, out
    if row.recovers:
        assert verdicts(out) == ALL_SERVED and hits(fake, USAGES_PATH) == 2
        return
    assert set(verdicts(out).values()) == {"WARN"}
    line = line_of(out, "a100spot")
    assert names_call(line, f"quotas not checked: {USAGES_CALL}", row.kind), line
    assert "Standard_NC24ads_A100_v4  spot      1-1    1,2,3" in out  # the SKU checks still ran
    assert hits(fake, USAGES_PATH) <= TEST_POLICY.attempts
    assert "call(s) gave no usable answer" in out


@pytest.mark.parametrize("row", HOSTILE_REPLIES, ids=lambda r: r.id)
def test_skus_answering_badly_leave_the_offering_unchecked_and_the_quotas_checked(fake, capsys, row):
    fake.usages[3] = usage("lowPriorityCores", 30, current=10)  # 20 free: below one 24-vCPU A100 node
    fake.script(SKUS_PATH, *replies(row, skus_body(fake), [("value", "0", "capabilities", "0", "value")]))
    code, out, err = run(capsys, row)
    assert "Traceback" not in out + err and err == ""
    assert code == 1, out
    if row.recovers:
        assert verdicts(out)["a100spot"] == "NOT SERVED" and verdicts(out)["a100od"] == "SERVED"
        return
    assert names_call(line_of(out, "a100od"), f"offering not checked: {SKUS_CALL}", row.kind)
    # the Spot quota is still read, with the catalog's vCPUs for the size
    assert "regional Spot vCPUs (lowPriorityCores): 20 free, one Standard_NC24ads_A100_v4 node needs 24" in \
        line_of(out, "a100spot")
    assert "VM family quota not checked" in line_of(out, "a100od")


#: One answer both calls accept, and the numbers each reads from it.
EVERY_CALL_ANSWER = {"value": [
    {"resourceType": "virtualMachines", "name": "Standard_NC24ads_A100_v4", "capabilities": [
        {"name": "vCPUs", "value": "24"}], "locationInfo": [{"location": REGION, "zones": ["1"]}]},
    {"name": {"value": "cores"}, "limit": 100, "currentValue": 0}]}
EVERY_CALL_FIGURES = [("value", "0", "capabilities", "0", "value"), ("value", "1", "limit")]


def test_every_call_answering_badly_means_nothing_could_be_checked(fake, capsys):
    for row in HOSTILE_REPLIES:
        if row.recovers:
            continue
        fake.scripts.clear()
        fake.requests.clear()
        fake.script(f"/subscriptions/{SUBSCRIPTION}/", *replies(row, EVERY_CALL_ANSWER, EVERY_CALL_FIGURES))
        code, out, err = run(capsys, row)
        assert code == 2, (row.name, out, err)
        assert out == "" and "Traceback" not in err
        assert err.startswith("preflight: nothing could be checked: no call to Azure Resource Manager was answered")
        assert names_call(err, SKUS_CALL, row.kind), (row.name, err)
        assert names_call(err, USAGES_CALL, row.kind), (row.name, err)


def test_json_lists_the_unanswered_calls(fake, capsys):
    denied = HostileReply("access denied", status=403, body="error", kind="denied")
    fake.script(USAGES_PATH, *replies(denied, usages_body(fake), []))
    assert main(["--stack", "aks-dev", "--json"], policy=TEST_POLICY) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["exit_code"] == 0 and len(report["unanswered_calls"]) == 1
    assert report["unanswered_calls"][0].startswith(f"{USAGES_CALL}: permission denied (403 AuthorizationFailed")
    assert report["unanswered_calls"][0].endswith("(needs Microsoft.Compute/locations/usages/read)")


# ---- credentials stay with their host; figures that say nothing are not "served" ----------------------------


def test_a_next_link_to_another_host_is_not_followed(fake, capsys):
    page = {"value": fake.usages[:1], "nextLink": "https://attacker.example/steal?x=1"}
    fake.script(USAGES_PATH, Reply(200, json.dumps(page).encode()))
    code, out, err = run(capsys)
    assert "leaves http://127.0.0.1" in out and "not followed" in out
    assert not any("attacker" in path for path in fake.requests)


def test_a_next_link_over_plain_http_is_not_followed(fake, capsys):
    link = fake.url.replace("http://", "https://") + "/subscriptions/x"  # another scheme: another origin
    fake.script(USAGES_PATH, Reply(200, json.dumps({"value": [], "nextLink": link}).encode()))
    _, out, _ = run(capsys)
    assert "not followed" in out


@pytest.mark.parametrize("endpoint", ["http://management.azure.com", "ftp://x", "https://user:pw@host",
                                      "https://host/path", "not a url"])
def test_an_endpoint_that_is_not_https_is_named(fake, capsys, monkeypatch, endpoint):
    monkeypatch.setenv(azure_api.ENDPOINT_ENV, endpoint)
    code, out, err = run(capsys)
    assert code == 2 and azure_api.ENDPOINT_ENV in err and "is not a Resource Manager endpoint" in err
    assert fake.requests == []


def test_a_subscription_name_for_its_id_is_named(fake, capsys, monkeypatch):
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", "Pay-As-You-Go")
    code, _, err = run(capsys)
    assert code == 2 and "'Pay-As-You-Go' is not a subscription ID" in err and "az account show" in err
    assert fake.requests == []


def test_zero_vcpus_in_the_sku_list_is_never_served(fake, capsys):
    for entry in fake.skus:
        for cap in entry["capabilities"]:
            if cap["name"] == "vCPUs":
                cap["value"] = "0"
    fake.usages[:] = [usage("cores", 0), usage("standardNCADSA100v4Family", 0), usage("standardNCASv3_T4Family", 0),
                      usage("lowPriorityCores", 0)]
    code, out, _ = run(capsys)
    assert code == 1 and "SERVED" not in set(verdicts(out).values()), out
    assert "no vCPU count" in out
