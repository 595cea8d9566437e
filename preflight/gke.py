"""Can each GKE accelerator pool get nodes: machine and accelerator offered per zone, and regional quota.

Per pool and zone (``nodePools.<pool>.zones``, else ``cluster.zones``), read-only Compute Engine calls:

- ``machineTypes.get``: is the machine type offered in the zone (404: not offered; ``deprecated.state``
  OBSOLETE or DELETED: not offered, DEPRECATED: a warning)? For accelerator-optimized types (A2, A3,
  A4, G2) its ``accelerators[]`` (``guestAcceleratorType``, ``guestAcceleratorCount``) must match the
  pool's accelerator and count.
- ``acceleratorTypes.get`` (GPU pools): is the GPU offered in the zone, and does
  ``maximumCardsPerInstance`` allow the pool's count (N1 machines with attached T4s)? TPU machine types
  carry their chips, so TPU pools need only the machine type.
- ``regions.get``: the region's ``quotas[]`` (``metric``, ``limit``, ``usage``); see
  :mod:`preflight.quota_metrics` for which metric a pool uses.

Verdict per pool: **fail** when no zone offers the machine with its accelerator, or the quota headroom
(limit - usage) is smaller than one node's accelerators or than ``min`` nodes' (also summed over pools
that share a metric); **warn** when only some zones offer it, when ``max`` nodes exceed the headroom,
or when the region lists no metric for the accelerator. Offerings and quota say a node *may* be created,
not that capacity is free right now (a zone can still be out of stock).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from preflight import quota_metrics
from preflight.report import number, table, verdict_line, verdict_of
from stacks.config import NodePool, StackConfig

UNUSABLE_STATES = ("OBSOLETE", "DELETED")


@dataclass
class ZoneCheck:
    zone: str
    machine: str  # "offered", "not offered", "deprecated", ...
    accelerator: str  # "offered", "not offered", "TPU machine", ...
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def offered(self) -> bool:
        return not self.problems


@dataclass
class QuotaCheck:
    region: str
    metric: str | None
    unit: str
    per_node: int
    min_nodes: int
    max_nodes: int
    limit: float | None = None
    usage: float | None = None
    note: str = ""

    @property
    def headroom(self) -> float | None:
        if self.limit is None:
            return None
        return self.limit - (self.usage or 0)


@dataclass
class GkePoolCheck:
    pool: str
    machine_type: str
    accelerator: str  # "2 x nvidia-tesla-a100"
    spot: bool
    zones: list[ZoneCheck]
    quotas: list[QuotaCheck]
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def served_zones(self) -> list[str]:
        return [z.zone for z in self.zones if z.offered]

    @property
    def verdict(self) -> str:
        return verdict_of(self.failures, self.warnings)


def region_of(zone: str) -> str:
    """``us-central1-c`` -> ``us-central1``."""
    return zone.rsplit("-", 1)[0]


def accelerator_pools(cfg: StackConfig) -> dict[str, NodePool]:
    return {name: p for name, p in cfg.node_pools.items() if p.machine_type}


def check_gke(cfg: StackConfig, compute: Any) -> list[GkePoolCheck]:
    """One GkePoolCheck per accelerator pool, in config order. ``compute``: a :class:`ComputeClient`."""
    pools = accelerator_pools(cfg)
    zones_of = {name: list(p.zones or cfg.cluster.zones) for name, p in pools.items()}
    regions = sorted({region_of(z) for zones in zones_of.values() for z in zones})
    region_bodies = {r: compute.region(r) for r in regions}
    cache: dict[tuple[str, str, str], Any] = {}

    def cached(kind: str, zone: str, name: str) -> Any:
        key = (kind, zone, name)
        if key not in cache:
            getter = compute.machine_type if kind == "machine" else compute.accelerator_type
            cache[key] = getter(zone, name)
        return cache[key]

    checks = []
    for name, pool in pools.items():
        zone_checks = [_check_zone(pool, zone, cached) for zone in zones_of[name]]
        quotas = [_check_quota(pool, region, region_bodies[region])
                  for region in sorted({region_of(z) for z in zones_of[name]})]
        acc = pool.accelerator
        check = GkePoolCheck(name, pool.machine_type or "", f"{acc.count} x {acc.type}", pool.spot,
                             zone_checks, quotas)
        _judge_offering(check)
        for quota in quotas:
            _judge_quota(check, quota)
        checks.append(check)
    _judge_shared_quota(checks)
    return checks


def _check_zone(pool: NodePool, zone: str, cached: Any) -> ZoneCheck:
    machine_type = pool.machine_type or ""
    acc = pool.accelerator
    machine = cached("machine", zone, machine_type)
    if machine is None:
        return ZoneCheck(zone, "not offered", "-", [f"{machine_type} not offered in {zone}"])
    check = ZoneCheck(zone, "offered", "-")
    state = (machine.get("deprecated") or {}).get("state", "")
    if state in UNUSABLE_STATES:
        check.machine = state.lower()
        check.problems.append(f"{machine_type} is {state} in {zone}")
    elif state:
        check.machine = state.lower()
        check.notes.append(f"{machine_type} is {state} in {zone}")
    if acc.family == "tpu":
        check.accelerator = "TPU machine"
        return check
    carried = [(a.get("guestAcceleratorType"), int(a.get("guestAcceleratorCount", 0)))
               for a in machine.get("accelerators") or []]
    if carried and (acc.type, acc.count) not in carried:
        shown = ", ".join(f"{n} x {t}" for t, n in carried)
        check.problems.append(f"{machine_type} carries {shown} in {zone}, the pool says {acc.count} x {acc.type}")
    accelerator = cached("accelerator", zone, acc.type)
    if accelerator is None:
        check.accelerator = "not offered"
        check.problems.append(f"{acc.type} not offered in {zone}")
        return check
    most = accelerator.get("maximumCardsPerInstance")
    if not carried and most is not None and int(most) < acc.count:
        check.accelerator = f"at most {most} per VM"
        check.problems.append(f"{zone} allows at most {most} x {acc.type} per VM, the pool asks {acc.count}")
    else:
        check.accelerator = "offered"
    return check


def _check_quota(pool: NodePool, region: str, region_body: dict[str, Any]) -> QuotaCheck:
    acc = pool.accelerator
    known = quota_metrics.gke_quota(acc.type)
    quota = QuotaCheck(region, None, known.unit if known else "accelerators", acc.count,
                       pool.autoscaling.min, pool.autoscaling.max)
    if known is None or known.standard is None:
        where = f"; console quota {known.console_name}" if known and known.console_name else ""
        quota.note = f"{acc.type} has no regions.get metric{where}"
        return quota
    warning = region_body.get("quotaStatusWarning")
    if warning:
        quota.note = f"regions.get returned no quotas ({warning.get('code', '')}: {warning.get('message', '')})"
        return quota
    listed = {q.get("metric"): q for q in region_body.get("quotas") or []}
    chosen = known.standard
    if pool.spot:
        preemptible = listed.get(known.preemptible)
        if preemptible is not None and not quota_metrics.gke_spot_falls_back_to_standard(preemptible.get("limit")):
            chosen = known.preemptible
        elif known.standard in listed:
            quota.note = f"no {known.preemptible} quota: Spot VMs count against {known.standard}"
        else:
            chosen = known.preemptible
    entry = listed.get(chosen)
    quota.metric = chosen
    if entry is None:
        quota.note = f"region {region} lists no {chosen} quota"
        return quota
    quota.limit = float(entry.get("limit", 0))
    quota.usage = float(entry.get("usage", 0))
    return quota


def _judge_offering(check: GkePoolCheck) -> None:
    zones = [z.zone for z in check.zones]
    for zone in check.zones:
        check.warnings.extend(zone.notes)
    if not check.served_zones:
        reasons = "; ".join(p for z in check.zones for p in z.problems)
        check.failures.append(f"no configured zone ({', '.join(zones)}) offers {check.machine_type} with "
                              f"{check.accelerator}: {reasons}")
    elif len(check.served_zones) < len(zones):
        missing = [z for z in check.zones if not z.offered]
        check.warnings.append(f"only {', '.join(check.served_zones)} of {', '.join(zones)} offer it "
                              f"({'; '.join(p for z in missing for p in z.problems)})")


def _judge_quota(check: GkePoolCheck, quota: QuotaCheck) -> None:
    headroom = quota.headroom
    if headroom is None:
        check.warnings.append(f"quota not checked: {quota.note}")
        return
    unit, metric = quota.unit, quota.metric
    left = f"quota {metric} in {quota.region} leaves {number(headroom)} {unit} ({number(quota.limit)} - " \
           f"{number(quota.usage)} in use)"
    one, at_min, at_max = quota.per_node, quota.per_node * quota.min_nodes, quota.per_node * quota.max_nodes
    if headroom < one:
        check.failures.append(f"{left}; one node needs {one}")
    elif headroom < at_min:
        check.failures.append(f"{left}; min {quota.min_nodes} nodes need {at_min}")
    elif headroom < at_max:
        fits = int(headroom // one)
        check.warnings.append(f"{left}; max {quota.max_nodes} nodes would need {at_max}, the autoscaler "
                              f"stops at {fits} node{'' if fits == 1 else 's'}")


def _judge_shared_quota(checks: list[GkePoolCheck]) -> None:
    """Pools drawing on one metric in one region share its headroom."""
    groups: dict[tuple[str, str], list[tuple[GkePoolCheck, QuotaCheck]]] = {}
    for check in checks:
        for quota in check.quotas:
            if quota.headroom is not None and quota.metric:
                groups.setdefault((quota.region, quota.metric), []).append((check, quota))
    for (region, metric), members in groups.items():
        if len(members) < 2:
            continue
        names = ", ".join(c.pool for c, _ in members)
        headroom = members[0][1].headroom or 0
        unit = members[0][1].unit
        total_min = sum(q.per_node * q.min_nodes for _, q in members)
        total_max = sum(q.per_node * q.max_nodes for _, q in members)
        for check, _ in members:
            if total_min > headroom:
                check.failures.append(f"pools {names} share {metric} in {region}: together they need "
                                      f"{total_min} {unit} at min nodes, {number(headroom)} left")
            elif total_max > headroom:
                check.warnings.append(f"pools {names} share {metric} in {region}: together they would need "
                                      f"{total_max} {unit} at max nodes, {number(headroom)} left")


def render(project: str, checks: list[GkePoolCheck]) -> str:
    lines = [f"GKE capacity preflight, project {project}", ""]
    zone_rows = [(c.pool, z.zone, c.machine_type, z.machine, c.accelerator, z.accelerator,
                  "yes" if z.offered else "no") for c in checks for z in c.zones]
    lines += table(("pool", "zone", "machine type", "machine", "accelerator", "accelerator offered", "usable"),
                   zone_rows)
    lines.append("")
    quota_rows = []
    for c in checks:
        for q in c.quotas:
            need = f"{q.per_node} / {q.per_node * q.min_nodes} / {q.per_node * q.max_nodes}"
            quota_rows.append((c.pool, q.region, "spot" if c.spot else "on-demand", q.metric or "-",
                               number(q.limit), number(q.usage), number(q.headroom), need, q.note))
    lines += table(("pool", "region", "model", "quota metric", "limit", "usage", "headroom",
                    "need 1 node / min / max", "note"), quota_rows)
    lines.append("")
    for c in checks:
        if c.verdict == "served":
            quota_text = "; ".join(f"{q.metric} headroom {number(q.headroom)} covers max {q.max_nodes} nodes"
                                   for q in c.quotas)
            lines.append(verdict_line("served", c.pool, f"{', '.join(c.served_zones)}; {quota_text}"))
        else:
            lines.append(verdict_line(c.verdict, c.pool, "; ".join(c.failures or c.warnings)))
    return "\n".join(lines)


def to_json(project: str, checks: list[GkePoolCheck]) -> dict[str, Any]:
    pools = []
    for c in checks:
        entry = asdict(c)
        entry["served_zones"] = c.served_zones
        entry["verdict"] = c.verdict
        for zone, raw in zip(c.zones, entry["zones"], strict=True):
            raw["offered"] = zone.offered
        for quota, raw in zip(c.quotas, entry["quotas"], strict=True):
            raw["headroom"] = quota.headroom
        pools.append(entry)
    return {"cloud": "gke", "project": project, "pools": pools}

