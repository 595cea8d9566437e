"""Can each GKE accelerator pool get nodes: machine and accelerator offered per zone, regional and GPU quota.

Per pool and zone (``nodePools.<pool>.zones``, else ``cluster.zones``), read-only Compute Engine calls:

- ``machineTypes.get``: is the machine type offered in the zone (404: not offered; ``deprecated.state``
  OBSOLETE or DELETED: not offered, DEPRECATED: a warning)? For accelerator-optimized types (A2, A3,
  A4, G2) its ``accelerators[]`` (``guestAcceleratorType``, ``guestAcceleratorCount``) must match the
  pool's accelerator and count.
- ``acceleratorTypes.get`` (GPU pools): is the GPU offered in the zone, and does
  ``maximumCardsPerInstance`` allow the pool's count (N1 machines with attached T4s)? TPU machine types
  carry their chips, so TPU pools need only the machine type.
- ``regions.get``: the region's ``quotas[]`` (``metric``, ``limit``, ``usage``); see
  :mod:`preflight.gke_quota` for which metric a pool uses.
- ``projects.get`` (when there are GPU pools): the project-wide ``GPUS_ALL_REGIONS`` quota, shared by
  every GPU pool.
- ``machineTypes.get`` also gives the live ``guestCpus`` and ``memoryMb``: a difference from the
  catalog's shape is a warning (the library sizes requests from the catalog).

Verdict per pool: **fail** when no zone offers the machine with its accelerator, or the quota headroom
(limit - usage) is smaller than one node's accelerators or than ``min`` nodes' (also summed over pools
that share a metric); **warn** when only some zones offer it, when ``max`` nodes exceed the headroom,
when the region lists no metric for the accelerator, or when a call could not be read (its zone or
quota is "not checked": neither for nor against the pool). Offerings and quota say a node *may* be created,
not that capacity is free right now (a zone can still be out of stock).
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from gpu_fungibility import catalog

from preflight import gke_quota
from preflight.calls import CallError, Calls
from preflight.google_api import MachineType, QuotaList
from preflight.outcome import exit_code, fail, nothing_answered, nothing_checked, print_unanswered
from preflight.report import number, table, verdict_line, verdict_of
from stacks.config import NodePool, StackConfig

PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
UNUSABLE_STATES = ("OBSOLETE", "DELETED")
NOTE_WIDTH = 130  # the quota table's note column; the verdict line carries the whole text


@dataclass
class ZoneCheck:
    zone: str
    machine: str  # "offered", "not offered", "deprecated", "not checked", ...
    accelerator: str  # "offered", "not offered", "TPU machine", "not checked", ...
    problems: list[str] = field(default_factory=list)  # the zone cannot serve the pool
    notes: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # a call failed: the zone may or may not serve it

    @property
    def offered(self) -> bool:
        return not self.problems and not self.unchecked


@dataclass
class QuotaCheck:
    region: str  # or "all regions" for a project-wide metric
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
    """One GkePoolCheck per accelerator pool, in config order. ``compute``: a :class:`ComputeClient`.

    A call that fails (:class:`CallError`, not fatal) leaves what it would have told as "not checked" and
    a warning naming the call; a fatal one (credentials, API disabled) propagates.
    """
    pools = accelerator_pools(cfg)
    zones_of = {name: list(p.zones or cfg.cluster.zones) for name, p in pools.items()}
    regions = sorted({region_of(z) for zones in zones_of.values() for z in zones})
    region_quotas = {r: _answer(lambda r=r: compute.region(r)) for r in regions}
    gpu_pools = any(p.accelerator.family == "gpu" for p in pools.values())
    project_quotas = _answer(compute.project_quotas) if gpu_pools else None
    cache: dict[tuple[str, str, str], Any] = {}

    def cached(kind: str, zone: str, name: str) -> Any:
        key = (kind, zone, name)
        if key not in cache:
            getter = compute.machine_type if kind == "machine" else compute.accelerator_type
            cache[key] = _answer(lambda: getter(zone, name))
        return cache[key]

    checks = []
    for name, pool in pools.items():
        zone_checks = [_check_zone(pool, zone, cached) for zone in zones_of[name]]
        quotas = [_check_quota(pool, region, region_quotas[region])
                  for region in sorted({region_of(z) for z in zones_of[name]})]
        if pool.accelerator.family == "gpu":
            quotas.append(_check_project_gpus(pool, project_quotas))
        acc = pool.accelerator
        check = GkePoolCheck(name, pool.machine_type or "", f"{acc.count} x {acc.type}", pool.spot,
                             zone_checks, quotas)
        _judge_offering(check)
        for quota in quotas:
            _judge_quota(check, quota)
        checks.append(check)
    _judge_shared_quota(checks)
    return checks


def _answer(get: Any) -> Any:
    """``get()``, or the CallError it raised (fatal ones propagate)."""
    try:
        return get()
    except CallError as exc:
        if exc.fatal:
            raise
        return exc


def _check_zone(pool: NodePool, zone: str, cached: Any) -> ZoneCheck:
    machine_type = pool.machine_type or ""
    acc = pool.accelerator
    machine = cached("machine", zone, machine_type)
    if isinstance(machine, CallError):
        return ZoneCheck(zone, "not checked", "-", unchecked=[str(machine)])
    if machine is None:
        return ZoneCheck(zone, "not offered", "-", [f"{machine_type} not offered in {zone}"])
    check = ZoneCheck(zone, "offered", "-")
    check.notes.extend(shape_differences(machine_type, machine))
    if machine.state in UNUSABLE_STATES:
        check.machine = machine.state.lower()
        check.problems.append(f"{machine_type} is {machine.state} in {zone}")
    elif machine.state:
        check.machine = machine.state.lower()
        check.notes.append(f"{machine_type} is {machine.state} in {zone}")
    if acc.family == "tpu":
        check.accelerator = "TPU machine"
        return check
    carried = list(machine.accelerators)
    if carried and (acc.type, acc.count) not in carried:
        shown = ", ".join(f"{n} x {t}" for t, n in carried)
        check.problems.append(f"{machine_type} carries {shown} in {zone}, the pool says {acc.count} x {acc.type}")
    most = cached("accelerator", zone, acc.type)
    if isinstance(most, CallError):
        check.accelerator = "not checked"
        check.unchecked.append(str(most))
    elif most is None:
        check.accelerator = "not offered"
        check.problems.append(f"{acc.type} not offered in {zone}")
    elif not carried and most and most < acc.count:
        check.accelerator = f"at most {most} per VM"
        check.problems.append(f"{zone} allows at most {most} x {acc.type} per VM, the pool asks {acc.count}")
    else:
        check.accelerator = "offered"
    return check


def shape_differences(machine_type: str, machine: MachineType) -> list[str]:
    """Where Compute Engine's live shape differs from the catalog's (vCPUs, memory); [] when they agree."""
    known = catalog.host_shape(machine_type)
    if known is None or not known.vcpus:
        return []
    live, listed = [], []
    if machine.vcpus is not None and machine.vcpus != known.vcpus:
        live.append(f"{machine.vcpus} vCPUs")
        listed.append(f"{known.vcpus} vCPUs")
    if machine.memory_mib is not None and abs(machine.memory_mib - known.memory_gib * 1024) > 1:
        live.append(f"{number(machine.memory_mib / 1024)} GiB")
        listed.append(f"{number(known.memory_gib)} GiB")
    if not live:
        return []
    return [f"{machine_type}: Compute Engine says {', '.join(live)}, the catalog {', '.join(listed)} "
            "(requests and simulations derived from the catalog may not fit)"]


def _check_quota(pool: NodePool, region: str, region_quotas: QuotaList | CallError) -> QuotaCheck:
    acc = pool.accelerator
    known = gke_quota.quota_of(acc.type)
    quota = QuotaCheck(region, None, known.unit if known else "accelerators", acc.count,
                       pool.autoscaling.min, pool.autoscaling.max)
    if known is None or known.standard is None:
        where = f"; console quota {known.console_name}" if known and known.console_name else ""
        quota.note = f"{acc.type} has no regions.get metric{where}"
        return quota
    if isinstance(region_quotas, CallError):
        quota.note = str(region_quotas)
        return quota
    if region_quotas.warning:
        quota.note = f"regions.get returned no quotas ({region_quotas.warning})"
        return quota
    listed = region_quotas.quotas
    chosen = known.standard
    if pool.spot:
        preemptible = listed.get(known.preemptible or "")
        if preemptible is not None and not gke_quota.spot_falls_back_to_standard(preemptible.limit):
            chosen = known.preemptible
        elif known.standard in listed:
            quota.note = f"no {known.preemptible} quota: Spot VMs count against {known.standard}"
        else:
            chosen = known.preemptible
    entry = listed.get(chosen or "")
    quota.metric = chosen
    if entry is None:
        quota.note = f"region {region} lists no {chosen} quota"
        return quota
    quota.limit, quota.usage = entry.limit, entry.usage
    return quota


def _check_project_gpus(pool: NodePool, project_quotas: QuotaList | CallError | None) -> QuotaCheck:
    """The project-wide ``GPUS_ALL_REGIONS`` quota, which every GPU VM counts against, Spot ones included."""
    acc = pool.accelerator
    metric = gke_quota.ALL_REGIONS_GPUS
    quota = QuotaCheck("all regions", metric, "GPUs", acc.count, pool.autoscaling.min, pool.autoscaling.max)
    if isinstance(project_quotas, CallError):
        quota.note = str(project_quotas)
    elif project_quotas is None or project_quotas.warning:
        quota.note = f"projects.get returned no quotas ({project_quotas.warning if project_quotas else ''})"
    elif metric not in project_quotas.quotas:
        quota.note = f"the project lists no {metric} quota"
    else:
        entry = project_quotas.quotas[metric]
        quota.limit, quota.usage = entry.limit, entry.usage
    return quota


def _judge_offering(check: GkePoolCheck) -> None:
    zones = [z.zone for z in check.zones]
    check.warnings.extend(dict.fromkeys(n for z in check.zones for n in z.notes))
    unchecked = [z for z in check.zones if z.unchecked and not z.problems]  # a known problem settles a zone
    refused = [z for z in check.zones if z.problems]
    refused_text = "; ".join(p for z in refused for p in z.problems)
    if unchecked:
        reasons = "; ".join(dict.fromkeys(r for z in unchecked for r in z.unchecked))
        check.warnings.append(f"offering not checked in {', '.join(z.zone for z in unchecked)}: {reasons}")
    if not check.served_zones and not unchecked:
        check.failures.append(f"no configured zone ({', '.join(zones)}) offers {check.machine_type} with "
                              f"{check.accelerator}: {refused_text}")
    elif refused and check.served_zones:
        check.warnings.append(f"only {', '.join(check.served_zones)} of {', '.join(zones)} offer it ({refused_text})")
    elif refused:
        check.warnings.append(f"{', '.join(z.zone for z in refused)} cannot serve it ({refused_text})")


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
            note = q.note if len(q.note) <= NOTE_WIDTH else q.note[:NOTE_WIDTH - 3] + "..."
            quota_rows.append((c.pool, q.region, "spot" if c.spot else "on-demand", q.metric or "-",
                               number(q.limit), number(q.usage), number(q.headroom), need, note))
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



def run(args: argparse.Namespace, cfg: StackConfig, other_config: dict[str, Any], calls: Calls) -> int:
    """``make preflight`` for a GKE stack: the project from the stack file or the environment, Google's default
    credentials, then :func:`check_gke`."""
    project = str(other_config.get("gcp:project") or os.environ.get(PROJECT_ENV, "")).strip()
    if not project:
        return fail(f"preflight: no GCP project: set gcp:project in Pulumi.{args.stack}.yaml "
                    f"(`pulumi config set gcp:project <project>`) or export {PROJECT_ENV}")
    try:
        from google.auth import exceptions as auth_exceptions
    except ImportError:
        return fail("preflight: google-auth is not installed; run `make venv` (it is in requirements.txt)")

    from preflight.google_api import (
        PERMISSIONS,
        CannotCheck,
        ComputeClient,
        UrllibRequest,
        credentials_from_environment,
    )

    request = UrllibRequest()
    try:
        credentials, source = credentials_from_environment(project, args.stack, request)
        compute = ComputeClient(project, credentials, request, calls)
        checks = check_gke(cfg, compute)
    except CannotCheck as exc:
        return fail(str(exc))
    except CallError as exc:  # fatal: credentials refused, API disabled
        return fail(f"preflight: {exc.detail} (on {exc.call})")
    except auth_exceptions.GoogleAuthError as exc:
        return fail(f"preflight: Google credentials could not be used: {exc}")
    if nothing_answered(calls):
        return fail(nothing_checked("the Compute Engine API", calls,
                                    f"read-only access in project {project}: {', '.join(PERMISSIONS)} "
                                    "(e.g. roles/compute.viewer)"))

    code = exit_code(checks)
    if args.json:
        print(json.dumps({**to_json(project, checks), "unanswered_calls": [str(f) for f in calls.failures],
                          "exit_code": code}, indent=2))
    else:
        print(render(project, checks))
        print(f"\n{compute.calls} Compute Engine API calls to {compute.endpoint}; credentials: {source}")
        print_unanswered(calls)
        if not checks:
            print("no accelerator pools to check")
    return code
