"""Preflight for AKS stacks: can each GPU pool's VM size get nodes in its zones, within the quotas?

Two read-only Azure Resource Manager APIs, in the stack's region:

- Resource SKUs (``GET /subscriptions/{id}/providers/Microsoft.Compute/skus?$filter=location eq '{region}'``,
  api-version 2021-07-01; learn.microsoft.com/rest/api/compute/resource-skus/list): whether the VM size is
  offered there, in which zones (``locationInfo[].zones``), its vCPUs and quota family, and the
  subscription's restrictions (``restrictions[]``: ``type`` Location or Zone, ``reasonCode``
  NotAvailableForSubscription / QuotaId).
- Compute usages (``GET /subscriptions/{id}/providers/Microsoft.Compute/locations/{region}/usages``,
  api-version 2023-07-01; learn.microsoft.com/rest/api/compute/usage/list): ``limit`` and ``currentValue`` of
  the VM family's vCPU quota (``name.value`` is the SKU's ``family``), the regional total (``cores``) and the
  regional Spot quota (``lowPriorityCores``, "Total Regional Spot vCPUs": learn.microsoft.com/azure/
  virtual-machines/spot-vms, "Spot VMs ... quota").

Credentials: Azure's own library, ``azure.identity.DefaultAzureCredential`` (environment, workload identity,
managed identity, Azure CLI, ...), for the ``https://management.azure.com/.default`` scope.

Verdicts as on GKE and EKS: a pool fails when its VM size is not offered (or restricted) in any of its zones,
or a quota it draws on is too small for one node or for ``min`` nodes; it warns when only some zones serve
it or the quota cannot hold ``max`` nodes. When the usages API cannot be read, quotas are reported as not
checked and the SKU checks still run (degrade, don't abort).

Every HTTP request goes through :func:`http_get`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from preflight.report import number, table, verdict_line, verdict_of

DEFAULT_ENDPOINT = "https://management.azure.com"
#: Points the preflight at another Resource Manager endpoint (a sovereign cloud, or a local fake).
ENDPOINT_ENV = "PREFLIGHT_AZURE_ENDPOINT"
SUBSCRIPTION_ENVS = ("AZURE_SUBSCRIPTION_ID", "ARM_SUBSCRIPTION_ID")
SCOPE = "https://management.azure.com/.default"
SKUS_API = "2021-07-01"
USAGES_API = "2023-07-01"
SPOT_QUOTA = "lowPriorityCores"
REGIONAL_QUOTA = "cores"
TIMEOUT_SECONDS = 30
PERMISSIONS = "Microsoft.Compute/skus/read and Microsoft.Compute/locations/usages/read (the Reader role has both)"


class CannotCheck(Exception):
    """The preflight cannot run (credentials, permissions, network): exit 2 with this message."""


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any]


def http_get(url: str, token: str, timeout: float = TIMEOUT_SECONDS) -> Reply:
    """One GET with a bearer token; any HTTP status comes back as a :class:`Reply`, network failures raise
    :class:`CannotCheck`. The one place the AKS preflight talks to the network."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (https or a local fake)
            return Reply(response.status, _json(response.read()))
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, _json(exc.read()))
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise CannotCheck(f"preflight: cannot reach Azure Resource Manager at {url.split('/subscriptions')[0]} "
                          f"({getattr(exc, 'reason', exc)}); check your network or {ENDPOINT_ENV}") from None


def _json(raw: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or b"{}")
    except ValueError:
        return {"error": {"code": "MalformedReply", "message": "the reply was not JSON"}}
    return parsed if isinstance(parsed, dict) else {"error": {"code": "MalformedReply", "message": "not an object"}}


def _error(reply: Reply) -> str:
    error = reply.body.get("error") if isinstance(reply.body.get("error"), dict) else {}
    return f"{error.get('code', reply.status)}: {error.get('message', '')}".strip()


class ArmClient:
    """The two Resource Manager reads, paged, for one subscription."""

    def __init__(self, subscription: str, token: str, endpoint: str | None = None):
        self.subscription = subscription
        self.token = token
        self.endpoint = (endpoint or os.environ.get(ENDPOINT_ENV, "").strip() or DEFAULT_ENDPOINT).rstrip("/")
        self.calls = 0

    def _pages(self, url: str) -> list[dict[str, Any]] | Reply:
        items: list[dict[str, Any]] = []
        while url:
            self.calls += 1
            reply = http_get(url, self.token)
            if reply.status != 200:
                return reply
            items += [v for v in reply.body.get("value") or [] if isinstance(v, dict)]
            url = str(reply.body.get("nextLink") or "")
        return items

    def skus(self, region: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode({"api-version": SKUS_API, "$filter": f"location eq '{region}'"})
        found = self._pages(f"{self.endpoint}/subscriptions/{self.subscription}/providers/Microsoft.Compute/skus?{query}")
        if isinstance(found, Reply):
            if found.status in (401, 403):
                raise CannotCheck(f"preflight: Azure refused the Resource SKUs read ({_error(found)}). The identity "
                                  f"needs {PERMISSIONS} on subscription {self.subscription}.")
            raise CannotCheck(f"preflight: the Resource SKUs API failed ({_error(found)})")
        return found

    def usages(self, region: str) -> dict[str, dict[str, float]] | str:
        """Quota name -> {limit, current}, or why they could not be read."""
        url = (f"{self.endpoint}/subscriptions/{self.subscription}/providers/Microsoft.Compute/locations/"
               f"{urllib.parse.quote(region)}/usages?api-version={USAGES_API}")
        found = self._pages(url)
        if isinstance(found, Reply):
            return f"quotas not checked: the usages API answered {_error(found)}"
        out = {}
        for usage in found:
            name = (usage.get("name") or {}).get("value")
            if name:
                out[str(name)] = {"limit": float(usage.get("limit") or 0), "current": float(usage.get("currentValue") or 0)}
        return out


@dataclass
class PoolCheck:
    pool: str
    vm_size: str
    spot: bool
    min_nodes: int
    max_nodes: int
    zones: list[str]
    served_zones: list[str] = field(default_factory=list)
    vcpus: int = 0
    family: str = ""
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return verdict_of(self.failures, self.warnings)


def _capability(sku: dict[str, Any], name: str) -> str | None:
    for cap in sku.get("capabilities") or []:
        if isinstance(cap, dict) and cap.get("name") == name:
            return str(cap.get("value"))
    return None


def _zones_of(sku: dict[str, Any], region: str) -> tuple[set[str], set[str], list[str]]:
    """(zones offered, zones restricted for the subscription, whole-region restriction reasons)."""
    offered: set[str] = set()
    for info in sku.get("locationInfo") or []:
        if isinstance(info, dict) and str(info.get("location", "")).lower() == region.lower():
            offered |= {str(z) for z in info.get("zones") or []}
    restricted: set[str] = set()
    regional: list[str] = []
    for restriction in sku.get("restrictions") or []:
        if not isinstance(restriction, dict):
            continue
        info = restriction.get("restrictionInfo") or {}
        if restriction.get("type") == "Zone":
            restricted |= {str(z) for z in info.get("zones") or []}
        elif restriction.get("type") == "Location":
            regional.append(str(restriction.get("reasonCode") or "restricted"))
    return offered, restricted, regional


def check_sku(check: PoolCheck, skus: dict[str, dict[str, Any]], region: str) -> None:
    sku = skus.get(check.vm_size.lower())
    if sku is None:
        check.failures.append(f"{check.vm_size} is not offered in {region}")
        return
    check.vcpus = int(float(_capability(sku, "vCPUs") or 0))
    check.family = str(sku.get("family") or "")
    offered, restricted, regional = _zones_of(sku, region)
    if regional:
        check.failures.append(f"{check.vm_size} is restricted for this subscription in {region} "
                              f"({', '.join(regional)}); request access or choose another size")
        return
    wanted = check.zones or sorted(offered)
    check.served_zones = [z for z in wanted if (z in offered or not offered) and z not in restricted]
    if not check.served_zones:
        check.failures.append(f"{check.vm_size} is not available in zones {', '.join(wanted)} of {region} "
                              f"(offered in: {', '.join(sorted(offered - restricted)) or 'none'})")
    elif len(check.served_zones) < len(wanted):
        missing = [z for z in wanted if z not in check.served_zones]
        check.warnings.append(f"not available in zone(s) {', '.join(missing)}; nodes go to "
                              f"{', '.join(check.served_zones)}")


def check_quota(checks: list[PoolCheck], usages: dict[str, dict[str, float]] | str) -> list[dict[str, Any]]:
    """Each pool against the quotas it draws on; returns the quota rows for the report."""
    if isinstance(usages, str):
        for check in checks:
            check.warnings.append(usages)
        return []
    drawn: dict[str, float] = {}
    for check in checks:
        if check.failures or not check.vcpus:
            continue
        names = [SPOT_QUOTA] if check.spot else [check.family, REGIONAL_QUOTA]
        for name in names:
            quota = usages.get(name)
            if quota is None:
                check.warnings.append(f"quota {name} is not listed for the region; not checked")
                continue
            free = quota["limit"] - quota["current"]
            label = "regional Spot vCPUs (lowPriorityCores)" if name == SPOT_QUOTA else f"{name} vCPUs"
            if free < check.vcpus:
                check.failures.append(f"{label}: {number(free)} free, one {check.vm_size} node needs {check.vcpus}")
            elif free < check.vcpus * check.min_nodes:
                check.failures.append(f"{label}: {number(free)} free, min {check.min_nodes} nodes need "
                                      f"{check.vcpus * check.min_nodes}")
            elif free < check.vcpus * check.max_nodes:
                check.warnings.append(f"{label}: {number(free)} free holds {int(free // check.vcpus)} of max "
                                      f"{check.max_nodes} nodes")
            drawn[name] = drawn.get(name, 0) + check.vcpus * check.min_nodes
    rows = []
    for name, need in drawn.items():
        quota = usages[name]
        rows.append({"quota": name, "limit": quota["limit"], "current": quota["current"], "min_nodes_need": need})
        if need > quota["limit"] - quota["current"]:
            for check in checks:
                if name in ([SPOT_QUOTA] if check.spot else [check.family, REGIONAL_QUOTA]) and not check.failures:
                    check.warnings.append(f"together the pools' min nodes need {number(need)} {name} vCPUs; "
                                          f"{number(quota['limit'] - quota['current'])} are free")
    return rows


def pool_checks(cfg: Any) -> list[PoolCheck]:
    return [PoolCheck(name, pool.vm_size or "", pool.spot, pool.autoscaling.min, pool.autoscaling.max,
                      list(pool.zones or cfg.cluster.zones))
            for name, pool in cfg.node_pools.items() if pool.family == "gpu"]


def check_aks(cfg: Any, client: ArmClient) -> tuple[list[PoolCheck], list[dict[str, Any]]]:
    region = cfg.cluster.location
    checks = pool_checks(cfg)
    if not checks:
        return checks, []
    skus = {str(s.get("name", "")).lower(): s for s in client.skus(region) if s.get("resourceType") == "virtualMachines"}
    for check in checks:
        check_sku(check, skus, region)
    return checks, check_quota(checks, client.usages(region))


def render(region: str, subscription: str, checks: list[PoolCheck], quotas: list[dict[str, Any]]) -> str:
    rows = [(c.pool, c.vm_size, "spot" if c.spot else "regular", f"{c.min_nodes}-{c.max_nodes}",
             ",".join(c.served_zones) or "-", str(c.vcpus or "-")) for c in checks]
    lines = [f"AKS preflight: subscription {subscription}, region {region}", "",
             *table(("pool", "vm size", "priority", "nodes", "zones served", "vCPUs/node"), rows)]
    if quotas:
        lines += ["", *table(("quota", "limit", "in use", "min nodes need"),
                             [(q["quota"], number(q["limit"]), number(q["current"]), number(q["min_nodes_need"]))
                              for q in quotas])]
    lines.append("")
    for check in checks:
        text = "; ".join([*check.failures, *check.warnings]) or "offered and within quota"
        lines.append(verdict_line(check.verdict, check.pool, text))
    return "\n".join(lines)


def to_json(region: str, subscription: str, checks: list[PoolCheck], quotas: list[dict[str, Any]]) -> dict[str, Any]:
    return {"cloud": "aks", "region": region, "subscription": subscription, "quotas": quotas,
            "pools": [{**{k: v for k, v in vars(c).items()}, "verdict": c.verdict} for c in checks]}


def default_credential() -> Any:
    """Azure's DefaultAzureCredential (imported here: only an AKS preflight loads azure-identity).

    Its own log lines about each credential it tried are silenced: :func:`access_token` says what failed
    and how to sign in, once."""
    import logging

    from azure.identity import DefaultAzureCredential

    logging.getLogger("azure.identity").setLevel(logging.CRITICAL)
    return DefaultAzureCredential()


def access_token(credential: Any) -> str:
    from azure.core.exceptions import ClientAuthenticationError

    try:
        return str(credential.get_token(SCOPE).token)
    except ClientAuthenticationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise CannotCheck(
            "preflight: no usable Azure credentials (" + first + ").\n"
            "Sign in, then rerun `make preflight`, for example:\n"
            "  az login && export AZURE_SUBSCRIPTION_ID=<subscription>\n"
            "  or set AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET (a service principal)") from None


def subscription_of(other_config: dict[str, Any]) -> str:
    return str(other_config.get("azure-native:subscriptionId") or next(
        (os.environ[e] for e in SUBSCRIPTION_ENVS if os.environ.get(e, "").strip()), "")).strip()
