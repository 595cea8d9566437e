"""Which zones each Compute Engine region has, and where GKE's GPU machines and TPUs are offered, as far as
recorded here (see :mod:`gpu_fungibility.zones` for what an offline zone check judges).

Sources:

- Compute Engine regions and zones: Cyclenerd/google-cloud-pricing-cost-calculator at commit 4707d143
  (2026-01-09), tools/regions.csv and tools/zones.csv (``gcloud compute regions list`` / ``zones list``) and the
  zones its tools/machinetypezone.csv lists machine types in (regions only some projects see, such as us-east7);
  checked against a copy of those rows in tests/fixtures/gce_regions_zones.csv. A region outside this list is
  an error (GKE refuses it); a region listed without zones has its zones unjudged.
- Compute Engine GPU machine types per zone: the same commit's tools/machinetypezone.csv, for the a2 and g2
  machines of the catalog (tests/fixtures/gce_gpu_machine_zones.csv). Machines it does not list (a3, a4, N1 with
  attached GPUs) are not judged.
- Cloud TPU zones: cloud.google.com/tpu/docs/regions-zones (v6e, v5p, v5e tables, read 2026-11), for the
  regions that page lists per generation; other regions are not judged.
"""

import re

from ...zones import LOCATION_KEY, Findings, PoolZones, Zoned, nearest

#: Compute Engine: every recorded region, and region -> zone suffixes (see above).
GCE_REGIONS: frozenset[str] = frozenset((
    "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2", "asia-southeast3", "australia-southeast1",
    "australia-southeast2", "europe-central2", "europe-north1", "europe-north2", "europe-southwest1",
    "europe-west1", "europe-west10", "europe-west12", "europe-west2", "europe-west3", "europe-west4",
    "europe-west5", "europe-west6", "europe-west8", "europe-west9", "me-central1", "me-central2", "me-west1",
    "northamerica-northeast1", "northamerica-northeast2", "northamerica-south1", "southamerica-east1",
    "southamerica-west1", "us-central1", "us-central2", "us-east1", "us-east2", "us-east4", "us-east5", "us-east7",
    "us-south1", "us-west1", "us-west2", "us-west3", "us-west4",
))

#: Compute Engine: region -> zone suffixes.
GCE_REGION_ZONES: dict[str, str] = {
    "asia-east1": "abc", "asia-east2": "abc", "asia-northeast1": "abc", "asia-northeast2": "abc",
    "asia-northeast3": "abc", "asia-south1": "abc", "asia-south2": "abc", "asia-southeast1": "abc",
    "asia-southeast2": "abc", "australia-southeast1": "abc", "australia-southeast2": "abc",
    "europe-central2": "abc", "europe-north1": "abc", "europe-southwest1": "abc", "europe-west1": "bcd",
    "europe-west12": "abc", "europe-west2": "abc", "europe-west3": "abc", "europe-west4": "abc",
    "europe-west5": "abc", "europe-west6": "abc", "europe-west8": "abc", "europe-west9": "abc",
    "me-central1": "abc", "me-west1": "abc", "northamerica-northeast1": "abc", "northamerica-northeast2": "abc",
    "southamerica-east1": "abc", "southamerica-west1": "abc", "us-central1": "abcdf", "us-central2": "abcd",
    "us-east1": "abcd", "us-east2": "a", "us-east4": "abc", "us-east5": "abc", "us-east7": "abc",
    "us-south1": "abc", "us-west1": "abc", "us-west2": "abc", "us-west3": "abc", "us-west4": "abc",
}

#: Cloud TPU: accelerator type -> region -> zone suffixes offering it (regions the TPU page lists).
TPU_ZONES: dict[str, dict[str, str]] = {
    "tpu-v6e-slice": {"us-central1": "b", "us-east1": "d", "us-east5": "ab", "europe-west4": "a"},
    "tpu-v5p-slice": {"us-central1": "a", "us-east5": "a"},
    "tpu-v5-lite-podslice": {"us-central1": "a", "us-south1": "a", "us-west1": "c", "us-west4": "a"},
}

#: Compute Engine GPU machines -> region -> zone suffixes offering them (machinetypezone.csv, see above).
_GCE_MACHINE_ZONE_GROUPS: list[tuple[tuple[str, ...], dict[str, str]]] = [
    (("a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g"),
     {"asia-northeast1": "ac", "asia-northeast3": "ab", "asia-southeast1": "bc", "europe-west4": "ab",
      "me-west1": "bc", "us-central1": "abcf", "us-east1": "ab", "us-west1": "b", "us-west3": "b", "us-west4": "b"}),
    (("a2-megagpu-16g",),
     {"asia-southeast1": "c", "europe-west4": "ab", "us-central1": "abcf", "us-east1": "a"}),
    (("a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g"),
     {"asia-southeast1": "c", "europe-west4": "a", "us-central1": "ac", "us-east4": "c", "us-east5": "b",
      "us-east7": "a"}),
    (("g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-24", "g2-standard-32",
      "g2-standard-48", "g2-standard-96"),
     {"asia-south1": "a", "asia-southeast1": "b", "europe-west4": "abc", "us-central1": "abc", "us-east1": "bd",
      "us-east4": "a", "us-east7": "b", "us-west1": "ab"}),
]

GCE_MACHINE_ZONES: dict[str, dict[str, str]] = {
    m: zones for machines, zones in _GCE_MACHINE_ZONE_GROUPS for m in machines}

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



def gce_region_issue(location: str) -> tuple[str, str] | None:
    """``(cluster.location, message)`` when the location's region is not a recorded Compute Engine region."""
    region = gce_region(location)
    if region in GCE_REGIONS:
        return None
    near = nearest(region, GCE_REGIONS) or ["us-central1"]
    others = f" (or {', '.join(near[1:])})" if len(near) > 1 else ""
    return (LOCATION_KEY, f"{region!r} is not a Compute Engine region (the {len(GCE_REGIONS)} recorded from "
                          "`gcloud compute regions list`, 2026-01, do not include it); write a region such as"
                          f" {near[0]}{others}, or one of its zones such as {near[0]}-"
                          f"{(GCE_REGION_ZONES.get(near[0]) or 'a')[0]} "
                          "(cloud.google.com/compute/docs/regions-zones lists them)")



def _offered_warnings(key: str, machine: str, pool_zones: list[str], region: str,
                      offered: dict[str, str], pool: str) -> list[str]:
    """Warnings for a machine (or TPU) recorded as offered in ``offered`` (region -> zone suffixes)."""
    here = [f"{region}-{s}" for s in offered.get(region, "")]
    missing = [z for z in pool_zones if z not in here]
    if not missing:
        return []
    if not here:
        regions = sorted(offered)
        return [f"{key}: {machine} is not offered in {region} as recorded (Compute Engine's machine and TPU "
                f"zone lists, see gpu_fungibility.clouds.gke.regions); regions offering it: {', '.join(regions)}. Choose one "
                "of those for cluster.location, or another machine; `make preflight` reads the live offering"]
    none = " no zone of this pool offers it;" if len(missing) == len(pool_zones) else ""
    return [f"{key}: {machine} is not offered in {', '.join(missing)} (recorded zones of {region} offering it: "
            f"{', '.join(here)});{none} set nodePools.{pool}.zones to {here}"]



def gce_findings(location: str, zoned: Zoned, pools: PoolZones) -> Findings:
    """(errors, warnings) of GKE: a region Compute Engine does not have (error; its zones are then not judged),
    zones outside the location's region (error), not a recorded zone of it, or outside the recorded zones of
    a pool's TPU or GPU machine (warnings)."""
    unknown_region = gce_region_issue(location)
    if unknown_region:
        return [unknown_region], []
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
    for name, accelerator_type, pool_zones, own, machines in pools:
        key = f"nodePools.{name}.zones" if own else f"nodePools.{name} (cluster.zones)"
        if accelerator_type in TPU_ZONES:
            offered = TPU_ZONES[accelerator_type]
            if region in offered:
                warnings += _offered_warnings(key, accelerator_type, pool_zones, region, offered, name)
            continue
        for machine in machines:
            if machine in GCE_MACHINE_ZONES:
                warnings += _offered_warnings(f"nodePools.{name}.machineType" if region not in
                                              GCE_MACHINE_ZONES[machine] else key,
                                              machine, pool_zones, region, GCE_MACHINE_ZONES[machine], name)
    return issues, warnings
