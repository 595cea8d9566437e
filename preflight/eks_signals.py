"""EC2 vCPU quotas and Spot placement scores for the EKS preflight's GPU pools.

- Service Quotas ``GetServiceQuota`` (service ``ec2``) for the on-demand or Spot vCPU quota of each
  pool's instance family (:mod:`preflight.eks_quota`); when no applied value exists (the API
  answers ``NoSuchResourceException``), ``GetAWSDefaultServiceQuota`` gives the default.
  Against ``DescribeInstanceTypes`` ``VCpuInfo.DefaultVCpus``: **fail** when the quota is below one
  node of the pool's smallest type, or below ``min`` such nodes (also summed over pools sharing the
  quota); **warn** when ``max`` nodes of the largest type exceed it. A quota value is a limit: instances
  already running in the family count against it too, and that usage (CloudWatch ``AWS/Usage``) is not read.
- EC2 ``GetSpotPlacementScores`` per Spot pool (its instance types, target ``max`` nodes, one score per
  availability zone, mapped to zone names with ``DescribeAvailabilityZones``): reported only, never a
  verdict. AWS scores a request of one or two instance types low by design.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from preflight import eks_quota
from preflight.calls import CallError, mapping
from preflight.calls import number as calls_number
from preflight.capacity import PoolCheck
from preflight.report import number, table


@dataclass
class VcpuQuota:
    code: str
    name: str
    spot: bool
    value: float | None = None
    source: str = "applied"  # or "default", "not read"
    pools: list[str] = field(default_factory=list)
    error: str = ""  # why the quota could not be read


def fetch_quota(api: Any, code: str) -> tuple[str, float | None, str]:
    """(quota name, value, "applied" | "default") for one ec2 quota code."""
    params = {"ServiceCode": "ec2", "QuotaCode": code}
    quota = api.call("service-quotas", "get_service_quota", "servicequotas:GetServiceQuota",
                     absent=frozenset({"NoSuchResourceException"}), parse=_quota, **params)
    source = "applied"
    if quota is None:
        quota = api.call("service-quotas", "get_aws_default_service_quota", "servicequotas:GetAWSDefaultServiceQuota",
                         parse=_quota, **params)
        source = "default"
    return quota[0], quota[1], source


def _quota(reply: dict[str, Any]) -> tuple[str, float | None]:
    quota = mapping(reply["Quota"], "Quota")
    value = quota.get("Value")
    return str(quota.get("QuotaName", "")), (None if value is None else calls_number(value, "Quota.Value"))


def check_vcpu_quotas(checks: list[PoolCheck], api: Any) -> list[VcpuQuota]:
    """Look up each quota the pools use once (sorted by code), then add failures/warnings to the pools.

    A quota that cannot be read (denied, throttled, malformed, ...) is a warning on its pools naming the call.
    """
    wanted: dict[str, VcpuQuota] = {}
    per_pool: dict[str, VcpuQuota] = {}
    for check in checks:
        sized = [i for i in check.instances if i.vcpus]
        codes = {eks_quota.ec2_vcpu_quota(i.instance_type, check.spot) for i in sized} - {None}
        if len(codes) != 1:
            if sized:
                check.warnings.append("instance types span several EC2 vCPU quotas or none the preflight knows; "
                                      "quota not checked")
            continue
        known = codes.pop()
        assert known is not None
        quota = wanted.setdefault(known.code, VcpuQuota(known.code, known.name, check.spot))
        quota.pools.append(check.pool)
        per_pool[check.pool] = quota
    for code in sorted(wanted):
        try:
            name, value, source = fetch_quota(api, code)
        except CallError as exc:
            if exc.fatal:
                raise
            wanted[code].source, wanted[code].error = "not read", str(exc)
            continue
        wanted[code].name, wanted[code].value, wanted[code].source = name or wanted[code].name, value, source
    by_name = {c.pool: c for c in checks}
    for pool, quota in per_pool.items():
        _judge(by_name[pool], quota)
    for quota in wanted.values():
        _judge_shared(quota, [by_name[p] for p in quota.pools])
    return [wanted[c] for c in sorted(wanted)]


def _sizes(check: PoolCheck) -> tuple[int, str, int, str]:
    sized = sorted((i.vcpus or 0, i.instance_type) for i in check.instances if i.vcpus)
    return sized[0][0], sized[0][1], sized[-1][0], sized[-1][1]


def _judge(check: PoolCheck, quota: VcpuQuota) -> None:
    if quota.error:
        check.warnings.append(f"vCPU quota {quota.code} not checked: {quota.error}")
        return
    if quota.value is None:
        check.warnings.append(f"Service Quotas returned no value for {quota.code}")
        return
    small, small_type, large, large_type = _sizes(check)
    label = f"{quota.code} ({quota.name}) is {number(quota.value)} vCPUs"
    if quota.value < small:
        check.failures.append(f"{label}; one {small_type} needs {small}")
    elif quota.value < small * check.min_nodes:
        check.failures.append(f"{label}; min {check.min_nodes} x {small_type} need {small * check.min_nodes}")
    elif quota.value < large * check.max_nodes:
        check.warnings.append(f"{label}; max {check.max_nodes} x {large_type} would need {large * check.max_nodes}")


def _judge_shared(quota: VcpuQuota, pools: list[PoolCheck]) -> None:
    if len(pools) < 2 or quota.value is None:
        return
    names = ", ".join(p.pool for p in pools)
    total_min = sum(_sizes(p)[0] * p.min_nodes for p in pools)
    total_max = sum(_sizes(p)[2] * p.max_nodes for p in pools)
    for pool in pools:
        if total_min > quota.value:
            pool.failures.append(f"pools {names} share {quota.code}: together they need {total_min} vCPUs at "
                                 f"min nodes, the quota is {number(quota.value)}")
        elif total_max > quota.value:
            pool.warnings.append(f"pools {names} share {quota.code}: together they would need {total_max} "
                                 f"vCPUs at max nodes, the quota is {number(quota.value)}")


def zone_names(api: Any) -> dict[str, str]:
    """availability zone id (``usw2-az1``) -> name (``us-west-2a``) in the client's region."""

    def names(reply: dict[str, Any]) -> dict[str, str]:
        return {str(z["ZoneId"]): str(z["ZoneName"]) for z in reply["AvailabilityZones"] if "ZoneId" in z}

    return api.call("ec2", "describe_availability_zones", "ec2:DescribeAvailabilityZones", parse=names)


def spot_placement_scores(api: Any, region: str, checks: list[PoolCheck]) -> str:
    """Fill ``spot_scores`` of each Spot pool; returns a note when scores could not be read (never fails)."""
    spot_pools = [c for c in checks if c.spot and c.served]
    if not spot_pools:
        return ""
    try:
        names = zone_names(api)
        for check in spot_pools:
            request: dict[str, Any] = {
                "InstanceTypes": [i.instance_type for i in check.instances if i.usable],
                "TargetCapacity": max(check.max_nodes, 1),
                "TargetCapacityUnitType": "units",
                "SingleAvailabilityZone": True,
                "RegionNames": [region],
            }
            while True:
                scores, token = api.call("ec2", "get_spot_placement_scores", "ec2:GetSpotPlacementScores",
                                         parse=_scores, **request)
                for zone_id, score in scores:
                    zone = names.get(zone_id, zone_id)
                    if zone in check.zones:
                        check.spot_scores[zone] = score
                if not token:
                    break
                request["NextToken"] = token
    except CallError as exc:
        if exc.fatal:
            raise
        return (f"Spot placement scores not read ({exc}); they need ec2:GetSpotPlacementScores and "
                "ec2:DescribeAvailabilityZones")
    return ""


def _scores(reply: dict[str, Any]) -> tuple[list[tuple[str, int]], str]:
    found = [(str(s.get("AvailabilityZoneId", "")), int(calls_number(s.get("Score", 0), "Score")))
             for s in reply["SpotPlacementScores"]]
    return found, str(reply.get("NextToken") or "")


def quota_section(quotas: list[VcpuQuota], checks: list[PoolCheck]) -> list[str]:
    if not quotas:
        return []
    rows = []
    for quota in quotas:
        pools = [c for c in checks if c.pool in quota.pools]
        need = ", ".join(f"{p.pool}: {_sizes(p)[0]} / {_sizes(p)[0] * p.min_nodes} / {_sizes(p)[2] * p.max_nodes}"
                         for p in pools)
        rows.append((quota.code, quota.name, "spot" if quota.spot else "on-demand",
                     number(quota.value), quota.source, need))
    return ["EC2 vCPU quotas (limits; running instances count against them too)",
            *table(("quota", "name", "model", "vCPUs", "source", "need 1 node / min / max"), rows)]


def spot_section(checks: list[PoolCheck], note: str) -> list[str]:
    rows = [(c.pool, ", ".join(i.instance_type for i in c.instances if i.usable), str(c.max_nodes),
             ", ".join(f"{z} {c.spot_scores[z]}" if z in c.spot_scores else f"{z} -" for z in c.served_zones))
            for c in checks if c.spot and c.served]
    if not rows and not note:
        return []
    lines = ["Spot placement scores (1-10, reported only; AWS scores one or two instance types low)"]
    if rows:
        lines += table(("pool", "instance types", "target nodes", "score per zone"), rows)
    if note:
        lines.append(note)
    return lines
