"""Which configured zones can serve each GPU pool, and does EC2 agree with the catalog about its GPUs.

Read-only EC2 calls, in the stack's region (``cluster.location``):

- ``DescribeInstanceTypeOfferings`` with ``LocationType=availability-zone``, one
  call per configured zone: which of the pools' instance types that zone offers;
- ``DescribeInstanceTypes``: each type's ``GpuInfo`` (model name such as
  ``A10G``, manufacturer, count, memory in MiB), compared with the project's
  catalog (:mod:`components.catalog`), and its ``VCpuInfo.DefaultVCpus`` for
  the quota checks in :mod:`preflight.eks_signals`.

A pool is served in a zone when at least one of its instance types is offered
there and matches the catalog (GPU model, count and memory); served in only
some of its zones is a warning. vCPUs or memory that differ from the catalog's
are a warning. A call that fails (:mod:`preflight.aws_calls`) leaves its zone's
offerings or its type's shape "not checked": a warning naming the call, and
never a reason to call the pool not served. Offerings say where a node group could launch
at all; vCPU quotas and Spot placement scores are :mod:`preflight.eks_signals`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import catalog
from gpu_fungibility.clouds.eks import machines as eks_machines

from preflight.calls import CallError, mapping
from preflight.calls import number as calls_number
from preflight.report import number, table, verdict_line, verdict_of
from stacks.config import NodePool, StackConfig

#: How far EC2's reported per-GPU memory may sit below/above the catalog's marketed
#: figure (EC2 reports usable memory: 22888 MiB for a 24 GB A10G).
MEMORY_TOLERANCE = 0.10


@dataclass(frozen=True)
class GpuFacts:
    """What EC2 says about an instance type's GPUs."""

    name: str
    manufacturer: str
    count: int
    memory_mib: int  # per GPU

    def __str__(self) -> str:
        return f"{self.count} x {self.manufacturer} {self.name} {self.memory_mib} MiB"


@dataclass
class InstanceCheck:
    instance_type: str
    offered_zones: list[str]
    gpu: GpuFacts | None
    known: bool = True  # False: EC2 does not know the type in this region
    mismatches: list[str] = field(default_factory=list)
    vcpus: int | None = None  # VCpuInfo.DefaultVCpus
    unchecked: list[str] = field(default_factory=list)  # the DescribeInstanceTypes call failed: shape unknown
    notes: list[str] = field(default_factory=list)  # live shape differs from the catalog (vCPUs, memory)

    @property
    def usable(self) -> bool:
        return self.known and not self.mismatches and not self.unchecked


@dataclass
class PoolCheck:
    pool: str
    zones: list[str]  # the zones the pool may use
    expected: str  # "1 x nvidia-l40s (NVIDIA L40S, 48 GiB)"
    instances: list[InstanceCheck]
    spot: bool = True
    min_nodes: int = 0
    max_nodes: int = 1
    failures: list[str] = field(default_factory=list)  # quota signals (preflight.eks_signals)
    warnings: list[str] = field(default_factory=list)
    spot_scores: dict[str, int] = field(default_factory=dict)  # zone -> EC2 Spot placement score 1-10
    unknown_zones: dict[str, str] = field(default_factory=dict)  # zone -> why its offerings were not read

    @property
    def served_zones(self) -> list[str]:
        usable = {z for i in self.instances if i.usable for z in i.offered_zones}
        return [z for z in self.zones if z in usable]

    @property
    def served(self) -> bool:
        return bool(self.served_zones)

    @property
    def unchecked(self) -> bool:
        """Some call this pool depends on failed, so "not offered" cannot be concluded."""
        return bool(self.unknown_zones) or any(i.unchecked for i in self.instances)

    @property
    def refused(self) -> bool:
        return not self.served and not self.unchecked

    @property
    def verdict(self) -> str:
        return "fail" if self.refused else verdict_of(self.failures, self.warnings)


def gpu_facts(instance_type_info: dict[str, Any]) -> GpuFacts | None:
    """GpuInfo of one ``DescribeInstanceTypes`` entry, or None for a type without GPUs."""
    gpus = (instance_type_info.get("GpuInfo") or {}).get("Gpus") or []
    if not gpus:
        return None
    first = gpus[0]
    return GpuFacts(
        name=str(first.get("Name", "")),
        manufacturer=str(first.get("Manufacturer", "")),
        count=sum(int(g.get("Count", 0)) for g in gpus),
        memory_mib=int((first.get("MemoryInfo") or {}).get("SizeInMiB", 0)),
    )


def model_matches(aws_name: str, model: catalog.GpuModel) -> bool:
    """EC2's short GPU name (``A10G``, ``H100``) is one word of the catalog's NVML product name."""
    words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", model.product_name) if w}
    return aws_name.lower() in words


def shape_mismatches(instance_type: str, pool: NodePool, gpu: GpuFacts | None) -> list[str]:
    """How EC2's GPUs for ``instance_type`` differ from what the catalog says the pool gets."""
    shape = eks_machines.machine_shape(instance_type)
    accelerator = shape.accelerator if shape else pool.accelerator.type
    count = shape.count if shape else pool.accelerator.count
    model = catalog.GPUS.get(accelerator)
    if gpu is None:
        return ["EC2 reports no GPU"]
    problems = []
    if gpu.manufacturer.upper() != "NVIDIA":
        problems.append(f"manufacturer {gpu.manufacturer}, not NVIDIA")
    if model is not None and not model_matches(gpu.name, model):
        problems.append(f"model {gpu.name}, catalog says {model.product_name}")
    if gpu.count != count:
        problems.append(f"{gpu.count} GPUs, catalog says {count}")
    if model is not None:
        expected_mib = model.memory_gib * 1024
        if abs(gpu.memory_mib - expected_mib) > MEMORY_TOLERANCE * expected_mib:
            problems.append(f"{gpu.memory_mib} MiB per GPU, catalog says {model.memory_gib} GiB")
    return problems


def pool_zones(cfg: StackConfig, pool: NodePool) -> list[str]:
    return list(pool.zones or cfg.cluster.zones)


def offerings_by_zone(api: Any, zones: list[str], instance_types: list[str]
                      ) -> tuple[dict[str, set[str]], dict[str, str]]:
    """(instance type -> configured zones offering it, zone -> why its offerings are unknown)."""
    offered: dict[str, set[str]] = {t: set() for t in instance_types}
    unknown: dict[str, str] = {}
    for zone in zones:
        request: dict[str, Any] = {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "location", "Values": [zone]}, {"Name": "instance-type", "Values": instance_types}],
        }
        try:
            while True:
                page = api.call("ec2", "describe_instance_type_offerings", "ec2:DescribeInstanceTypeOfferings",
                                parse=_offerings_page, **request)
                for itype, location in page[0]:
                    if itype in offered:
                        offered[itype].add(location)
                if not page[1]:
                    break
                request["NextToken"] = page[1]
        except CallError as exc:
            if exc.fatal:
                raise
            unknown[zone] = str(exc)
    return offered, unknown


def _offerings_page(reply: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:
    entries = reply["InstanceTypeOfferings"]  # absent: not an answer to this call
    if not isinstance(entries, list):
        raise TypeError("InstanceTypeOfferings is not a list")
    return [(str(o["InstanceType"]), str(o["Location"])) for o in entries], str(reply.get("NextToken") or "")


def describe_types(api: Any, instance_types: list[str]) -> dict[str, dict[str, Any] | None | CallError]:
    """instance type -> its ``DescribeInstanceTypes`` entry (None: EC2 does not know it; CallError: not read)."""
    found: dict[str, dict[str, Any] | None | CallError] = {}
    for itype in instance_types:
        try:
            found[itype] = api.call("ec2", "describe_instance_types", "ec2:DescribeInstanceTypes",
                                    absent=frozenset({"InvalidInstanceType"}), parse=_first_type,
                                    InstanceTypes=[itype])
        except CallError as exc:
            if exc.fatal:
                raise
            found[itype] = exc
    return found


def _first_type(reply: dict[str, Any]) -> dict[str, Any] | None:
    entries = reply["InstanceTypes"]
    if not isinstance(entries, list):
        raise TypeError("InstanceTypes is not a list")
    if not entries:
        return None
    entry = mapping(entries[0], "InstanceTypes[0]")
    gpu_facts(entry)  # a GpuInfo that cannot be read makes the answer malformed here, not later
    for section, key in (("VCpuInfo", "DefaultVCpus"), ("MemoryInfo", "SizeInMiB")):
        value = mapping(entry.get(section) or {}, section).get(key)
        if value is not None:
            calls_number(value, f"{section}.{key}")
    return entry


def host_differences(instance_type: str, entry: dict[str, Any]) -> list[str]:
    """Where EC2's vCPUs and memory differ from the catalog's; [] when they agree or the catalog has none."""
    known = catalog.host_shape(instance_type)
    if known is None or not known.vcpus:
        return []
    vcpus = (entry.get("VCpuInfo") or {}).get("DefaultVCpus")
    memory = (entry.get("MemoryInfo") or {}).get("SizeInMiB")
    live, listed = [], []
    if vcpus is not None and int(vcpus) != known.vcpus:
        live.append(f"{vcpus} vCPUs")
        listed.append(f"{known.vcpus} vCPUs")
    if memory is not None and abs(int(memory) - known.memory_gib * 1024) > 1:
        live.append(f"{number(int(memory) / 1024)} GiB")
        listed.append(f"{number(known.memory_gib)} GiB")
    if not live:
        return []
    return [f"{instance_type}: EC2 says {', '.join(live)}, the catalog {', '.join(listed)} "
            "(requests and simulations derived from the catalog may not fit)"]


def check_capacity(cfg: StackConfig, api: Any) -> list[PoolCheck]:
    """One PoolCheck per GPU pool, in config order. ``api``: an :class:`preflight.aws_calls.AwsApi`."""
    pools = {n: p for n, p in cfg.node_pools.items() if p.family == "gpu" and p.instance_types}
    all_types = sorted({t for p in pools.values() for t in p.instance_types or []})
    zones = sorted({z for p in pools.values() for z in pool_zones(cfg, p)})
    offered, unknown_zones = offerings_by_zone(api, zones, all_types) if all_types else ({}, {})
    described = describe_types(api, all_types)
    checks = []
    for name, pool in pools.items():
        zones_here = pool_zones(cfg, pool)
        instances = [_instance_check(itype, pool, zones_here, described.get(itype), offered)
                     for itype in pool.instance_types or []]
        check = PoolCheck(name, zones_here, _expected(pool), instances, spot=pool.spot,
                          min_nodes=pool.autoscaling.min, max_nodes=pool.autoscaling.max,
                          unknown_zones={z: unknown_zones[z] for z in zones_here if z in unknown_zones})
        check.warnings.extend(dict.fromkeys(n for i in instances for n in i.notes))
        reasons = list(dict.fromkeys(r for i in instances for r in i.unchecked))
        if reasons:
            check.warnings.append("shape not checked: " + "; ".join(reasons))
        if check.unknown_zones:
            reasons = "; ".join(dict.fromkeys(check.unknown_zones.values()))
            check.warnings.append(f"offerings not checked in {', '.join(check.unknown_zones)}: {reasons}")
        refused = [z for z in zones_here if z not in check.served_zones and z not in check.unknown_zones]
        if check.served and refused:
            check.warnings.append(f"only {', '.join(check.served_zones)} of {', '.join(zones_here)} offer a "
                                  "matching instance type")
        checks.append(check)
    return checks


def _instance_check(itype: str, pool: NodePool, zones: list[str], entry: dict[str, Any] | None | CallError,
                    offered: dict[str, set[str]]) -> InstanceCheck:
    offered_here = [z for z in zones if z in offered.get(itype, set())]
    if isinstance(entry, CallError):
        return InstanceCheck(itype, offered_here, None, unchecked=[str(entry)])
    if entry is None:
        return InstanceCheck(itype, [], None, known=False, mismatches=["EC2 does not offer this type in the region"])
    gpu = gpu_facts(entry)
    vcpus = (entry.get("VCpuInfo") or {}).get("DefaultVCpus")
    return InstanceCheck(itype, offered_here, gpu, mismatches=shape_mismatches(itype, pool, gpu),
                         vcpus=int(vcpus) if vcpus else None, notes=host_differences(itype, entry))


def _expected(pool: NodePool) -> str:
    acc = pool.accelerator
    model = catalog.GPUS.get(acc.type)
    detail = f" ({model.product_name}, {model.memory_gib} GiB)" if model else ""
    return f"{acc.count} x {acc.type}{detail}"


def render_table(region: str, checks: list[PoolCheck], extra: list[str] | None = None) -> str:
    """One row per (pool, instance type), any ``extra`` sections (quotas, Spot scores), one verdict per pool."""
    header = ("pool", "instance type", "EC2 GPUs", "catalog", "shape", "offered in")
    rows = []
    for check in checks:
        for inst in check.instances:
            read = [z for z in check.zones if z not in check.unknown_zones]
            offered = ", ".join(inst.offered_zones) if inst.offered_zones else \
                "none of " + ", ".join(read) if read else "not read"
            if check.unknown_zones and inst.offered_zones:
                offered += f" ({', '.join(check.unknown_zones)} not read)"
            rows.append((
                check.pool,
                inst.instance_type,
                str(inst.gpu) if inst.gpu else ("unknown type" if not inst.known else
                                                "not read" if inst.unchecked else "no GPU"),
                check.expected,
                "ok" if inst.usable else "MISMATCH: " + "; ".join(inst.mismatches) if inst.mismatches
                else "not checked",
                offered if inst.known else "-",
            ))
    lines = [f"EC2 capacity preflight, region {region}", "", *table(header, rows), ""]
    if extra:
        lines += [*extra, ""]
    for check in checks:
        if check.refused:
            lines.append(verdict_line("fail", check.pool, f"no configured zone ({', '.join(check.zones)}) offers "
                                      "an instance type of this pool with the catalog's GPU shape"))
        elif check.failures or check.warnings:
            lines.append(verdict_line(check.verdict, check.pool, "; ".join(check.failures or check.warnings)))
        else:
            lines.append(verdict_line("served", check.pool, ", ".join(check.served_zones)))
    return "\n".join(lines)
