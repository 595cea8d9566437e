"""Zones against the cluster's region and the recorded zonal offerings (gpu_fungibility.zones), offline.

A GKE zone outside the cluster's region is an error (GKE places node locations in the cluster's
region only); EKS and AKS refuse theirs in their own composition rules. A zone the recorded data
does not list, or a pool whose accelerator is not offered in a zone, is a warning: the data is dated,
and ``make preflight`` reads the live offering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_fungibility import zones

if TYPE_CHECKING:
    from stacks.config import StackConfig

Issues = list[tuple[str, str]]


def zone_issues(cfg: StackConfig) -> Issues:
    if cfg.cluster.cloud != "gke":
        return []
    region = zones.gce_region(cfg.cluster.location)
    issues: Issues = []
    for path, zone in _all_zones(cfg):
        parts = zones.gce_zone_parts(zone)
        if parts is None:
            issues.append((path, f"{zone!r} is not a Compute Engine zone name such as {region}-a"))
        elif parts[0] != region:
            issues.append((path, f"{zone} is in region {parts[0]}, not in {region} (cluster.location "
                                 f"{cfg.cluster.location}); list zones of {region}{_known(zones.gce_zones(region))}"))
    return issues


def zone_warnings(cfg: StackConfig) -> list[str]:
    cloud = cfg.cluster.cloud
    if cloud == "gke":
        return _gke_warnings(cfg)
    if cloud == "eks":
        return _eks_warnings(cfg)
    return []


def _gke_warnings(cfg: StackConfig) -> list[str]:
    region = zones.gce_region(cfg.cluster.location)
    known = zones.gce_zones(region)
    warnings = []
    for path, zone in _all_zones(cfg):
        parts = zones.gce_zone_parts(zone)
        if known is not None and parts is not None and parts[0] == region and zone not in known:
            warnings.append(f"{path}: {zone} is not a zone of {region} as recorded ({', '.join(known)}); "
                            "GKE refuses a zone that does not exist")
    for name, pool in cfg.node_pools.items():
        offered = zones.tpu_zones(pool.accelerator.type, region)
        if offered is None:
            continue
        own = pool.zones is not None
        pool_zones = pool.zones or cfg.cluster.zones
        missing = [z for z in pool_zones if z not in offered]
        if missing:
            key = f"nodePools.{name}.zones" if own else f"nodePools.{name} (cluster.zones)"
            none = " no zone of this pool offers it;" if len(missing) == len(pool_zones) else ""
            warnings.append(f"{key}: {pool.accelerator.type} is not offered in {', '.join(missing)} "
                            f"(recorded TPU zones of {region}: {', '.join(offered)});{none} "
                            f"set nodePools.{name}.zones to {offered}")
    return warnings


def _eks_warnings(cfg: StackConfig) -> list[str]:
    region = cfg.cluster.location
    known = zones.ec2_zones(region)
    if known is None:
        return []
    return [f"{path}: {zone} is not an availability zone of {region} as recorded ({', '.join(known)}; "
            "AZ names map per AWS account: `aws ec2 describe-availability-zones` lists yours)"
            for path, zone in _all_zones(cfg) if zone.startswith(region) and zone not in known]


def _all_zones(cfg: StackConfig) -> list[tuple[str, str]]:
    found = [(f"cluster.zones[{i}]", z) for i, z in enumerate(cfg.cluster.zones)]
    for name, pool in cfg.node_pools.items():
        found += [(f"nodePools.{name}.zones[{i}]", z) for i, z in enumerate(pool.zones or [])
                  if z not in cfg.cluster.zones]  # the pool's zones must be cluster zones: reported once
    return found


def _known(listed: list[str] | None) -> str:
    return f" ({', '.join(listed)})" if listed else ""
