"""Which configured zones can serve each GPU pool, and does EC2 agree with the catalog about its GPUs.

Read-only EC2 calls, in the stack's region (``cluster.location``):

- ``DescribeInstanceTypeOfferings`` with ``LocationType=availability-zone``, one
  call per configured zone: which of the pools' instance types that zone offers;
- ``DescribeInstanceTypes``: each type's ``GpuInfo`` (model name such as
  ``A10G``, manufacturer, count, memory in MiB), compared with the project's
  catalog (:mod:`components.catalog`).

A pool is served in a zone when at least one of its instance types is offered
there and matches the catalog (GPU model, count and memory). Offerings say
nothing about Spot capacity or account quotas at this moment; they say where
a node group could launch at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import catalog

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

    @property
    def usable(self) -> bool:
        return self.known and not self.mismatches


@dataclass
class PoolCheck:
    pool: str
    zones: list[str]  # the zones the pool may use
    expected: str  # "1 x nvidia-l40s (NVIDIA L40S, 48 GiB)"
    instances: list[InstanceCheck]

    @property
    def served_zones(self) -> list[str]:
        usable = {z for i in self.instances if i.usable for z in i.offered_zones}
        return [z for z in self.zones if z in usable]

    @property
    def served(self) -> bool:
        return bool(self.served_zones)


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


def describe_gpus(ec2: Any, instance_types: list[str]) -> dict[str, GpuFacts | None | bool]:
    """instance type -> its GPU facts (None: no GPU; False: EC2 does not know the type here)."""
    from botocore.exceptions import ClientError

    found: dict[str, GpuFacts | None | bool] = {}
    for itype in instance_types:
        try:
            reply = ec2.describe_instance_types(InstanceTypes=[itype])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceType":
                found[itype] = False
                continue
            raise
        entries = reply.get("InstanceTypes", [])
        found[itype] = gpu_facts(entries[0]) if entries else False
    return found


def check_capacity(cfg: StackConfig, ec2: Any) -> list[PoolCheck]:
    """One PoolCheck per GPU pool, in config order."""
    pools = {n: p for n, p in cfg.node_pools.items() if p.family == "gpu" and p.instance_types}
    all_types = sorted({t for p in pools.values() for t in p.instance_types or []})
    zones = sorted({z for p in pools.values() for z in pool_zones(cfg, p)})
    offered = offerings_by_zone(ec2, zones, all_types) if all_types else {}
    gpus = describe_gpus(ec2, all_types)
    checks = []
    for name, pool in pools.items():
        zones_here = pool_zones(cfg, pool)
        instances = []
        for itype in pool.instance_types or []:
            facts = gpus.get(itype)
            if facts is False:
                instances.append(InstanceCheck(itype, [], None, known=False,
                                               mismatches=["EC2 does not offer this type in the region"]))
                continue
            gpu = facts if isinstance(facts, GpuFacts) else None
            instances.append(InstanceCheck(
                itype,
                [z for z in zones_here if z in offered.get(itype, set())],
                gpu,
                mismatches=shape_mismatches(itype, pool, gpu),
            ))
        checks.append(PoolCheck(name, zones_here, _expected(pool), instances))
    return checks


def _expected(pool: NodePool) -> str:
    acc = pool.accelerator
    model = catalog.GPUS.get(acc.type)
    detail = f" ({model.product_name}, {model.memory_gib} GiB)" if model else ""
    return f"{acc.count} x {acc.type}{detail}"


def render_table(region: str, checks: list[PoolCheck]) -> str:
    """A plain-text table: one row per (pool, instance type), then one verdict per pool."""
    header = ("pool", "instance type", "EC2 GPUs", "catalog", "shape", "offered in")
    rows = [header]
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
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"EC2 capacity preflight, region {region}", ""]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    for check in checks:
        if check.served:
            lines.append(f"SERVED      {check.pool}: {', '.join(check.served_zones)}")
        else:
            lines.append(f"NOT SERVED  {check.pool}: no configured zone ({', '.join(check.zones)}) offers an "
                         "instance type of this pool with the catalog's GPU shape")
    return "\n".join(lines)
