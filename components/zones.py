"""Which zones each cloud region has, and where an accelerator is offered, as far as recorded here.

Offline checks only: the live offering of a project, account or subscription is the preflight's job
(``make preflight``). Everything here errs on the side that still deploys: a region or accelerator
not recorded is not judged, and a zone missing from a recorded list is a warning, never an error
(the clouds add zones; these lists are dated).

Sources:

- Compute Engine zones per region: cloud.google.com/compute/docs/regions-zones, "Available regions and
  zones" (read 2026-11). Only regions listed here are judged.
- Cloud TPU zones: cloud.google.com/tpu/docs/regions-zones (v6e, v5p, v5e tables, read 2026-11), for the
  regions that page lists per generation; other regions are not judged.
- EC2 availability zones per region: the zones of moto 5.2.5's recorded DescribeInstanceTypeOfferings
  (``moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz``), checked against
  that data in tests/test_zones.py. AZ names map to physical zones per AWS account, and some accounts
  see other letters (us-west-1, ap-northeast-1): an unknown letter is a warning.
- Azure availability zones are "1", "2" and "3" in every region that has zones
  (learn.microsoft.com/azure/reliability/availability-zones-overview); the AKS composition refuses others.
"""

import re

#: Compute Engine: region -> zone suffixes.
GCE_REGION_ZONES: dict[str, str] = {
    "asia-east1": "abc", "asia-northeast1": "abc", "asia-northeast3": "abc", "asia-south1": "abc",
    "asia-southeast1": "abc", "australia-southeast1": "abc", "europe-north1": "abc", "europe-west1": "bcd",
    "europe-west2": "abc", "europe-west3": "abc", "europe-west4": "abc", "northamerica-northeast1": "abc",
    "southamerica-east1": "abc", "us-central1": "abcf", "us-east1": "bcd", "us-east4": "abc", "us-east5": "abc",
    "us-south1": "abc", "us-west1": "abc", "us-west2": "abc", "us-west3": "abc", "us-west4": "abc",
}

#: Cloud TPU: accelerator type -> region -> zone suffixes offering it (regions the TPU page lists).
TPU_ZONES: dict[str, dict[str, str]] = {
    "tpu-v6e-slice": {"us-central1": "b", "us-east1": "d", "us-east5": "ab", "europe-west4": "a"},
    "tpu-v5p-slice": {"us-central1": "a", "us-east5": "a"},
    "tpu-v5-lite-podslice": {"us-central1": "a", "us-south1": "a", "us-west1": "c", "us-west4": "a"},
}

#: EC2: region -> availability zone letters (moto 5.2.5's recorded offerings, see above).
EC2_REGION_ZONES: dict[str, str] = {
    "af-south-1": "abc", "ap-east-1": "abc", "ap-northeast-1": "acd", "ap-northeast-2": "abcd",
    "ap-northeast-3": "abc", "ap-south-1": "abc", "ap-south-2": "abc", "ap-southeast-1": "abc",
    "ap-southeast-2": "abc", "ap-southeast-3": "abc", "ap-southeast-4": "abc", "ap-southeast-5": "abc",
    "ca-central-1": "abd", "ca-west-1": "abc", "eu-central-1": "abc", "eu-central-2": "abc", "eu-north-1": "abc",
    "eu-south-1": "abc", "eu-south-2": "abc", "eu-west-1": "abc", "eu-west-2": "abcd", "eu-west-3": "abc",
    "il-central-1": "abc", "me-central-1": "abc", "me-south-1": "abc", "sa-east-1": "abc",
    "us-east-1": "abcdef", "us-east-2": "abc", "us-west-1": "ab", "us-west-2": "abcd",
}

_GCE_ZONE = re.compile(r"([a-z]+-[a-z]+[0-9]+)-([a-z])")


def gce_region(location: str) -> str:
    """The region of a GKE location: ``us-central1`` for ``us-central1`` and for ``us-central1-c``."""
    found = _GCE_ZONE.fullmatch(location)
    return found.group(1) if found else location


def gce_zone_parts(zone: str) -> tuple[str, str] | None:
    """``(region, suffix)`` of a Compute Engine zone name, or None when it is not shaped like one."""
    found = _GCE_ZONE.fullmatch(zone)
    return (found.group(1), found.group(2)) if found else None


def gce_zones(region: str) -> list[str] | None:
    """The recorded zones of a Compute Engine region, or None when the region is not recorded."""
    suffixes = GCE_REGION_ZONES.get(region)
    return None if suffixes is None else [f"{region}-{s}" for s in suffixes]


def tpu_zones(accelerator_type: str, region: str) -> list[str] | None:
    """Zones of ``region`` that offer a TPU generation, or None when not recorded for that region."""
    suffixes = TPU_ZONES.get(accelerator_type, {}).get(region)
    return None if suffixes is None else [f"{region}-{s}" for s in suffixes]


def ec2_zones(region: str) -> list[str] | None:
    """The recorded availability zones of an EC2 region, or None when the region is not recorded."""
    letters = EC2_REGION_ZONES.get(region)
    return None if letters is None else [f"{region}{c}" for c in letters]


#: ``(key path, zone)`` pairs to judge, and ``(pool name, accelerator type, its zones, own zones?)`` per pool.
Zoned = list[tuple[str, str]]
PoolZones = list[tuple[str, str, list[str], bool]]


def gce_findings(location: str, zoned: Zoned, pools: PoolZones) -> tuple[list[tuple[str, str]], list[str]]:
    """(errors, warnings) of GKE zones: outside the location's region (error), not a recorded zone of it,
    or outside a TPU pool's recorded zones (warnings)."""
    region = gce_region(location)
    known = gce_zones(region)
    issues, warnings = [], []
    for path, zone in zoned:
        parts = gce_zone_parts(zone)
        if parts is None:
            issues.append((path, f"{zone!r} is not a Compute Engine zone name such as {region}-a"))
        elif parts[0] != region:
            listed = f" ({', '.join(known)})" if known else ""
            issues.append((path, f"{zone} is in region {parts[0]}, not in {region} (cluster.location "
                                 f"{location}); list zones of {region}{listed}"))
        elif known is not None and zone not in known:
            warnings.append(f"{path}: {zone} is not a zone of {region} as recorded ({', '.join(known)}); "
                            "GKE refuses a zone that does not exist")
    for name, accelerator_type, pool_zones, own in pools:
        offered = tpu_zones(accelerator_type, region)
        missing = [z for z in pool_zones if offered is not None and z not in offered]
        if missing:
            key = f"nodePools.{name}.zones" if own else f"nodePools.{name} (cluster.zones)"
            none = " no zone of this pool offers it;" if len(missing) == len(pool_zones) else ""
            warnings.append(f"{key}: {accelerator_type} is not offered in {', '.join(missing)} "
                            f"(recorded TPU zones of {region}: {', '.join(offered)});{none} "
                            f"set nodePools.{name}.zones to {offered}")
    return issues, warnings


def ec2_findings(location: str, zoned: Zoned, pools: PoolZones) -> tuple[list[tuple[str, str]], list[str]]:
    """Warnings for EC2 availability zones the recorded region does not list (the region prefix is the EKS
    composition's own error)."""
    known = ec2_zones(location)
    if known is None:
        return [], []
    return [], [f"{path}: {zone} is not an availability zone of {location} as recorded ({', '.join(known)}; "
                "AZ names map per AWS account: `aws ec2 describe-availability-zones` lists yours)"
                for path, zone in zoned if zone.startswith(location) and zone not in known]
