"""``python -m preflight --stack aks-dev`` against a local Azure Resource Manager (tests/azure_fake.py)."""

from __future__ import annotations

import json

import pytest

from preflight import azure_api
from preflight.__main__ import main
from tests.azure_fake import SUBSCRIPTION, TOKEN, AzureFake, authorization_failed, sku, usage
from tests.hostile_replies import TEST_POLICY
from tests.preflight_output import line_of

REGION = "eastus2"
SIZES = ("Standard_NC24ads_A100_v4", "Standard_NC8as_T4_v3", "Standard_NC4as_T4_v3")


class Token:
    token = TOKEN


class Credential:
    def get_token(self, *scopes: str) -> Token:
        assert scopes == (azure_api.SCOPE,)
        return Token()


def healthy() -> AzureFake:
    return AzureFake(
        region=REGION,
        skus=[sku(s, REGION) for s in SIZES],
        usages=[usage("cores", 350), usage("standardNCADSA100v4Family", 100), usage("standardNCASv3_T4Family", 64),
                usage("lowPriorityCores", 200)],
    )


@pytest.fixture
def fake(monkeypatch):
    server = healthy().start()
    monkeypatch.setenv(azure_api.ENDPOINT_ENV, server.url)
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", SUBSCRIPTION)
    monkeypatch.setattr(azure_api, "default_credential", Credential)
    yield server
    server.stop()


def verdicts(capsys) -> dict[str, str]:
    out = capsys.readouterr().out
    return {line.split(":")[0].split()[-1]: line.split()[0] for line in out.splitlines()
            if line.startswith(("SERVED", "WARN", "NOT SERVED"))}


def test_every_pool_served_when_offered_and_within_quota(fake, capsys):
    assert main(["--stack", "aks-dev"]) == 0
    assert set(verdicts(capsys).values()) == {"SERVED"}
    assert any("/providers/Microsoft.Compute/skus" in r for r in fake.requests)
    assert any("/locations/eastus2/usages" in r for r in fake.requests)


def test_pages_are_followed(fake, capsys):
    assert main(["--stack", "aks-dev"]) == 0
    assert sum("skip=" in r for r in fake.requests) >= 2  # 3 SKUs and 4 usages in pages of 2


def test_a_zone_without_the_size_warns(fake, capsys):
    fake.skus[0] = sku("Standard_NC24ads_A100_v4", REGION, zones=("1", "2"))
    assert main(["--stack", "aks-dev"]) == 0
    out = verdicts(capsys)
    assert out["a100spot"] == "WARN" and out["a100od"] == "WARN" and out["t4spot"] == "SERVED"


def test_a_size_restricted_for_the_subscription_is_not_served(fake, capsys):
    fake.skus[1] = sku("Standard_NC8as_T4_v3", REGION, restrictions=[{
        "type": "Location", "values": [REGION], "restrictionInfo": {"locations": [REGION]},
        "reasonCode": "NotAvailableForSubscription"}])
    assert main(["--stack", "aks-dev"]) == 1
    assert verdicts(capsys)["t4spot"] == "NOT"


def test_zone_restrictions_leave_the_other_zones(fake, capsys):
    fake.skus[2] = sku("Standard_NC4as_T4_v3", REGION, restrictions=[{
        "type": "Zone", "values": [REGION], "restrictionInfo": {"locations": [REGION], "zones": ["1", "2", "3"]},
        "reasonCode": "NotAvailableForSubscription"}])
    assert main(["--stack", "aks-dev"]) == 1
    assert verdicts(capsys)["t4classic"] == "NOT"


def test_spot_quota_below_one_node_is_not_served(fake, capsys):
    fake.usages[3] = usage("lowPriorityCores", 30, current=10)
    assert main(["--stack", "aks-dev"]) == 1
    out = capsys.readouterr().out
    assert "NOT SERVED  a100spot: regional Spot vCPUs (lowPriorityCores): 20 free, one Standard_NC24ads_A100_v4 " \
           "node needs 24" in out


def test_family_quota_below_min_nodes_is_not_served(fake, capsys):
    fake.usages[1] = usage("standardNCADSA100v4Family", 24, current=12)
    assert main(["--stack", "aks-dev"]) == 1
    assert verdicts(capsys)["a100od"] == "NOT"


def test_an_unreadable_usages_api_degrades_to_warnings(fake, capsys):
    fake.failures["usages"] = (403, authorization_failed("Microsoft.Compute/locations/usages/read"))
    assert main(["--stack", "aks-dev"], policy=TEST_POLICY) == 0
    out = capsys.readouterr().out
    assert "quotas not checked: Compute usages list eastus2: permission denied (403 AuthorizationFailed" in out
    assert "(needs Microsoft.Compute/locations/usages/read)" in out
    assert "WARN" in out and "NOT SERVED" not in out


def test_a_refused_skus_read_leaves_the_offering_unchecked_and_the_quotas_checked(fake, capsys):
    fake.failures["skus"] = (403, authorization_failed("Microsoft.Compute/skus/read"))
    fake.usages[3] = usage("lowPriorityCores", 30, current=10)
    assert main(["--stack", "aks-dev"], policy=TEST_POLICY) == 1
    out = capsys.readouterr().out
    assert "offering not checked: Resource SKUs list eastus2: permission denied (403 AuthorizationFailed" in out
    assert "(needs Microsoft.Compute/skus/read)" in out
    # the Spot quota is still checked, with the catalog's 24 vCPUs of Standard_NC24ads_A100_v4
    assert "NOT SERVED  a100spot: regional Spot vCPUs (lowPriorityCores): 20 free, one Standard_NC24ads_A100_v4 " \
           "node needs 24" in out
    assert "VM family quota not checked" in line_of(out, "a100od")


def test_refused_credentials_cannot_check(fake, monkeypatch, capsys):
    class Stale(Token):
        token = "expired"

    class StaleCredential(Credential):
        def get_token(self, *scopes: str) -> Token:
            return Stale()

    monkeypatch.setattr(azure_api, "default_credential", StaleCredential)
    assert main(["--stack", "aks-dev"], policy=TEST_POLICY) == 2
    err = capsys.readouterr().err
    assert "Azure refused the credentials (401 InvalidAuthenticationToken" in err and "az login" in err
    assert len(fake.requests) == 1  # fatal: no other call is made


def test_missing_credentials_say_how_to_sign_in(fake, monkeypatch, capsys):
    from azure.core.exceptions import ClientAuthenticationError

    class NoCredential:
        def get_token(self, *scopes: str):
            raise ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")

    monkeypatch.setattr(azure_api, "default_credential", NoCredential)
    assert main(["--stack", "aks-dev"]) == 2
    err = capsys.readouterr().err
    assert "no usable Azure credentials" in err and "az login" in err


def test_no_subscription_cannot_check(fake, monkeypatch, capsys):
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID")
    monkeypatch.delenv("ARM_SUBSCRIPTION_ID", raising=False)
    assert main(["--stack", "aks-dev"]) == 2
    assert "no Azure subscription" in capsys.readouterr().err


def test_an_unreachable_endpoint_cannot_check(fake, monkeypatch, capsys):
    monkeypatch.setenv(azure_api.ENDPOINT_ENV, "http://127.0.0.1:9")
    assert main(["--stack", "aks-dev"], policy=TEST_POLICY) == 2
    err = capsys.readouterr().err
    assert "nothing could be checked: no call to Azure Resource Manager was answered" in err
    assert "Resource SKUs list eastus2: cannot reach Azure Resource Manager at http://127.0.0.1:9" in err


def test_json_output(fake, capsys):
    assert main(["--stack", "aks-dev", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cloud"] == "aks" and doc["exit_code"] == 0
    assert {p["pool"]: p["served_zones"] for p in doc["pools"]}["a100spot"] == ["1", "2", "3"]
    assert {q["quota"] for q in doc["quotas"]} >= {"lowPriorityCores", "standardNCADSA100v4Family", "cores"}
