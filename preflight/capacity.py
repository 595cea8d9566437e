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
some of its zones is a warning. Offerings say where a node group could launch
at all; vCPU quotas and Spot placement scores are :mod:`preflight.eks_signals`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import catalog

from preflight.report import table, verdict_line, verdict_of
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

    @property
    def usable(self) -> bool:
        return self.known and not self.mismatches


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

    @property
    def served_zones(self) -> list[str]:
        usable = {z for i in self.instances if i.usable for z in i.offered_zones}
        return [z for z in self.zones if z in usable]

    @property
    def served(self) -> bool:
        return bool(self.served_zones)

    @property
    def verdict(self) -> str:
        return "fail" if not self.served else verdict_of(self.failures, self.warnings)


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
    shape = catalog.eks_instance_shape(instance_type)
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


def offerings_by_zone(ec2: Any, zones: list[str], instance_types: list[str]) -> dict[str, set[str]]:
    """instance type -> configured zones offering it (one paginated call per zone)."""
    offered: dict[str, set[str]] = {t: set() for t in instance_types}
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    for zone in zones:
        pages = paginator.paginate(
            LocationType="availability-zone",
            Filters=[{"Name": "location", "Values": [zone]},
                     {"Name": "instance-type", "Values": instance_types}],
        )
        for page in pages:
            for offering in page.get("InstanceTypeOfferings", []):
                if offering.get("InstanceType") in offered:
                    offered[offering["InstanceType"]].add(offering["Location"])
    return offered


def describe_types(ec2: Any, instance_types: list[str]) -> dict[str, dict[str, Any] | None]:
    """instance type -> its ``DescribeInstanceTypes`` entry (None: EC2 does not know the type here)."""
    from botocore.exceptions import ClientError

    found: dict[str, dict[str, Any] | None] = {}
    for itype in instance_types:
        try:
            reply = ec2.describe_instance_types(InstanceTypes=[itype])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceType":
                found[itype] = None
                continue
            raise
        entries = reply.get("InstanceTypes", [])
        found[itype] = entries[0] if entries else None
    return found


def check_capacity(cfg: StackConfig, ec2: Any) -> list[PoolCheck]:
    """One PoolCheck per GPU pool, in config order."""
    pools = {n: p for n, p in cfg.node_pools.items() if p.family == "gpu" and p.instance_types}
    all_types = sorted({t for p in pools.values() for t in p.instance_types or []})
    zones = sorted({z for p in pools.values() for z in pool_zones(cfg, p)})
    offered = offerings_by_zone(ec2, zones, all_types) if all_types else {}
    described = describe_types(ec2, all_types)
    checks = []
    for name, pool in pools.items():
        zones_here = pool_zones(cfg, pool)
        instances = []
        for itype in pool.instance_types or []:
            entry = described.get(itype)
            if entry is None:
                instances.append(InstanceCheck(itype, [], None, known=False,
                                               mismatches=["EC2 does not offer this type in the region"]))
                continue
            gpu = gpu_facts(entry)
            vcpus = (entry.get("VCpuInfo") or {}).get("DefaultVCpus")
            instances.append(InstanceCheck(
                itype,
                [z for z in zones_here if z in offered.get(itype, set())],
                gpu,
                mismatches=shape_mismatches(itype, pool, gpu),
                vcpus=int(vcpus) if vcpus else None,
            ))
        check = PoolCheck(name, zones_here, _expected(pool), instances, spot=pool.spot,
                          min_nodes=pool.autoscaling.min, max_nodes=pool.autoscaling.max)
        if check.served and len(check.served_zones) < len(zones_here):
            check.warnings.append(f"only {', '.join(check.served_zones)} of {', '.join(zones_here)} offer a "
                                  "matching instance type")
        checks.append(check)
    return checks


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
            offered = ", ".join(inst.offered_zones) if inst.offered_zones else "none of " + ", ".join(check.zones)
            rows.append((
                check.pool,
                inst.instance_type,
                str(inst.gpu) if inst.gpu else ("unknown type" if not inst.known else "no GPU"),
                check.expected,
                "ok" if inst.usable else "MISMATCH: " + "; ".join(inst.mismatches),
                offered if inst.known else "-",
            ))
    lines = [f"EC2 capacity preflight, region {region}", "", *table(header, rows), ""]
    if extra:
        lines += [*extra, ""]
    for check in checks:
        if not check.served:
            lines.append(verdict_line("fail", check.pool, f"no configured zone ({', '.join(check.zones)}) offers "
                                      "an instance type of this pool with the catalog's GPU shape"))
        elif check.failures or check.warnings:
            lines.append(verdict_line(check.verdict, check.pool, "; ".join(check.failures or check.warnings)))
        else:
            lines.append(verdict_line("served", check.pool, ", ".join(check.served_zones)))
    return "\n".join(lines)
