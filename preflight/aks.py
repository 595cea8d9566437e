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

Verdicts as on GKE and EKS: a pool fails when its VM size is not offered (or restricted) in any of its zones,
or a quota it draws on is too small for one node or for ``min`` nodes; it warns when only some zones serve
it or the quota cannot hold ``max`` nodes.

Every call goes through :mod:`preflight.calls` (:mod:`preflight.azure_api`: deadline per call and per run,
429 and 5xx retried after ``Retry-After`` or a backoff, malformed answers named). A call that gives no
usable answer leaves what it feeds "not checked" (a warning naming the call): an unreadable SKU list leaves
the offering unchecked and the quotas are checked with the catalog's vCPUs (the VM family's quota then
unchecked, since only the SKU names the family); unreadable usages leave the quotas unchecked.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility.clouds.aks import machines as aks_machines

from preflight.azure_api import ArmClient, Usage
from preflight.calls import CallError, Calls
from preflight.outcome import exit_code, fail, nothing_answered, nothing_checked, print_unanswered
from preflight.report import number, table, verdict_line, verdict_of

SPOT_QUOTA = "lowPriorityCores"
REGIONAL_QUOTA = "cores"


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


def check_sku(check: PoolCheck, skus: dict[str, dict[str, Any]] | CallError, region: str) -> None:
    if isinstance(skus, CallError):
        shape = aks_machines.machine_shape(check.vm_size)
        check.vcpus = shape.vcpus if shape else 0
        check.served_zones = []
        check.warnings.append(f"offering not checked: {skus}")
        return
    sku = skus.get(check.vm_size.lower())
    if sku is None:
        check.failures.append(f"{check.vm_size} is not offered in {region}")
        return
    check.vcpus = int(float(_capability(sku, "vCPUs") or 0))
    if check.vcpus <= 0:  # a SKU without a vCPU count: the catalog's, or the quotas stay unchecked (never SERVED)
        shape = aks_machines.machine_shape(check.vm_size)
        check.vcpus = shape.vcpus if shape else 0
        check.warnings.append(f"the SKU list gives {check.vm_size} no vCPU count; "
                              + (f"the catalog's {check.vcpus} is used" if check.vcpus else "its quotas are not checked"))
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


def check_quota(checks: list[PoolCheck], usages: dict[str, Usage] | CallError) -> list[dict[str, Any]]:
    """Each pool against the quotas it draws on; returns the quota rows for the report."""
    if isinstance(usages, CallError):
        for check in checks:
            check.warnings.append(f"quotas not checked: {usages}")
        return []
    drawn: dict[str, float] = {}
    for check in checks:
        if check.failures or not check.vcpus:
            continue
        for name in quota_names(check):
            quota = usages.get(name)
            if quota is None:
                check.warnings.append(f"quota {name} is not listed for the region; not checked")
                continue
            free = quota.limit - quota.current
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
        rows.append({"quota": name, "limit": quota.limit, "current": quota.current, "min_nodes_need": need})
        if need > quota.limit - quota.current:
            for check in checks:
                if name in quota_names(check) and not check.failures:
                    check.warnings.append(f"together the pools' min nodes need {number(need)} {name} vCPUs; "
                                          f"{number(quota.limit - quota.current)} are free")
    return rows


def quota_names(check: PoolCheck) -> list[str]:
    """The quotas a pool draws on: Spot pools the regional Spot quota; regular pools their VM family's
    (when the SKU list named it) and the regional total."""
    if check.spot:
        return [SPOT_QUOTA]
    return [check.family, REGIONAL_QUOTA] if check.family else [REGIONAL_QUOTA]


def pool_checks(cfg: Any) -> list[PoolCheck]:
    return [PoolCheck(name, pool.vm_size or "", pool.spot, pool.autoscaling.min, pool.autoscaling.max,
                      list(pool.zones or cfg.cluster.zones))
            for name, pool in cfg.node_pools.items() if pool.family == "gpu"]


def check_aks(cfg: Any, client: ArmClient) -> tuple[list[PoolCheck], list[dict[str, Any]]]:
    region = cfg.cluster.location
    checks = pool_checks(cfg)
    if not checks:
        return checks, []
    skus: dict[str, dict[str, Any]] | CallError
    try:
        skus = {str(s.get("name", "")).lower(): s for s in client.skus(region)}
    except CallError as exc:
        if exc.fatal:
            raise
        skus = exc
    for check in checks:
        check_sku(check, skus, region)
        if isinstance(skus, CallError) and not check.spot:
            check.warnings.append("VM family quota not checked: the SKU list names the family")
    usages: dict[str, Usage] | CallError
    try:
        usages = client.usages(region)
    except CallError as exc:
        if exc.fatal:
            raise
        usages = exc
    return checks, check_quota(checks, usages)


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


def run(args: argparse.Namespace, cfg: Any, other_config: dict[str, Any], calls: Calls) -> int:
    """``make preflight`` for an AKS stack: the subscription from the stack file or the environment, a token from
    azure-identity's default chain, then :func:`check_aks`."""
    try:
        import azure.identity  # noqa: F401
    except ImportError:
        return fail("preflight: azure-identity is not installed; run `make venv` (it is in requirements.txt)")
    from preflight import azure_api

    subscription = azure_api.subscription_of(other_config)
    if not subscription:
        return fail(f"preflight: no Azure subscription: set azure-native:subscriptionId in Pulumi.{args.stack}.yaml "
                    "(`pulumi config set azure-native:subscriptionId <id>`) or export AZURE_SUBSCRIPTION_ID")
    region = cfg.cluster.location
    try:
        azure_api.check_subscription(subscription)
        azure_api.endpoint_of(os.environ.get(azure_api.ENDPOINT_ENV))  # before any token is asked for
        token = azure_api.access_token(azure_api.default_credential(), max(calls.remaining(), 0.001))
        client = azure_api.ArmClient(subscription, token, calls)
        checks, quotas = check_aks(cfg, client)
    except azure_api.CannotCheck as exc:
        return fail(str(exc))
    except CallError as exc:  # fatal: credentials refused
        return fail(f"preflight: {exc.detail} (on {exc.call})")
    if nothing_answered(calls):
        return fail(nothing_checked("Azure Resource Manager", calls,
                                    f"{azure_api.PERMISSIONS} on subscription {subscription}"))
    code = exit_code(checks)
    if args.json:
        print(json.dumps({**to_json(region, subscription, checks, quotas),
                          "unanswered_calls": [str(f) for f in calls.failures], "exit_code": code}, indent=2))
        return code
    print(render(region, subscription, checks, quotas))
    print(f"\n{client.calls} Azure Resource Manager calls to {client.endpoint}")
    print_unanswered(calls)
    if not checks:
        print("no GPU pools to check")
    return code
