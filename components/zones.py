"""Which zones each cloud region has, and where an accelerator is offered, as far as recorded here.

Offline checks only: the live offering of a project, account or subscription is the preflight's job
(``make preflight``). Everything here errs on the side that still deploys: a region or accelerator
not recorded is not judged, and a zone missing from a recorded list is a warning, never an error
(the clouds add zones; these lists are dated).

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
- EC2 availability zones per region: the zones of moto 5.2.5's recorded DescribeInstanceTypeOfferings
  (``moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz``), checked against
  that data in tests/test_your_own_stack.py.
- EC2 regions: botocore 1.44.5's ``botocore/data/endpoints.json``, every partition (the commercial regions,
  China, GovCloud, the isolated and sovereign partitions); a region outside it is an error.
- EC2 GPU instance types per region: moto 5.2.5's recorded DescribeInstanceTypeOfferings by region
  (``moto/ec2/resources/instance_type_offerings/region/<region>.json.gz``) for the catalog's instance types;
  regions moto does not record (newer than its data) are not judged.
- Azure region names are lowercase letters and digits (``westeurope``, ``eastus2``: the ``name`` column of
  ``az account list-locations``; learn.microsoft.com/azure/reliability/regions-list). No list of regions is
  recorded here, so only the name's shape is judged: ``west-europe`` or ``West Europe`` is refused with the
  name to write. Which GPU sizes a region offers is not recorded for Azure (``make preflight`` reads it). AZ names map to physical zones per AWS account, and some accounts
  see other letters (us-west-1, ap-northeast-1): an unknown letter is a warning.
- Azure availability zones are "1", "2" and "3" in every region that has zones
  (learn.microsoft.com/azure/reliability/availability-zones-overview); the AKS composition refuses others.
"""

import difflib
import re

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
#: EC2: every region of botocore 1.44.5's endpoints.json, all partitions (see above).
EC2_REGIONS: frozenset[str] = frozenset((
    "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1",
    "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
    "ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1",
    "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1",
    "me-south-1", "mx-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2", "cn-north-1",
    "cn-northwest-1", "us-gov-east-1", "us-gov-west-1", "us-iso-east-1", "us-iso-west-1", "us-isob-east-1",
    "us-isob-west-1", "eu-isoe-west-1", "us-isof-east-1", "us-isof-south-1", "eusc-de-east-1",
))
#: EC2 GPU instance types -> the regions moto 5.2.5 records offering them (see above).
_EC2_INSTANCE_REGION_GROUPS: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("g4dn.xlarge", "g4dn.2xlarge", "g4dn.12xlarge"),
     ("af-south-1", "ap-east-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1",
     "ap-southeast-1", "ap-southeast-2", "ca-central-1", "eu-central-1", "eu-north-1", "eu-south-1", "eu-west-1",
     "eu-west-2", "eu-west-3", "me-south-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",)),
    (("g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.12xlarge", "g5.24xlarge", "g5.48xlarge"),
     ("ap-east-1", "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-2", "ap-southeast-3",
     "ca-central-1", "eu-central-1", "eu-north-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3",
     "il-central-1", "me-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-2",)),
    (("g6.xlarge", "g6.2xlarge", "g6.12xlarge", "g6.48xlarge"),
     ("ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-south-2", "ap-southeast-2", "ap-southeast-5",
     "ca-central-1", "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-2", "eu-west-2", "eu-west-3",
     "me-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-2",)),
    (("g6e.xlarge", "g6e.2xlarge", "g6e.12xlarge", "g6e.48xlarge"),
     ("ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1", "ap-south-2", "eu-central-1",
     "eu-north-1", "eu-south-2", "me-central-1", "us-east-1", "us-east-2", "us-west-2",)),
    (("p4d.24xlarge",),
     ("ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-2", "ca-central-1", "eu-central-1",
     "eu-north-1", "eu-west-1", "eu-west-2", "sa-east-1", "us-east-1", "us-east-2", "us-west-2",)),
    (("p4de.24xlarge",),
     ("ap-northeast-1", "ap-southeast-1", "eu-central-1", "il-central-1", "us-east-1", "us-west-2",)),
    (("p5.48xlarge",),
     ("ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-2", "ap-southeast-3", "ca-central-1",
     "eu-north-1", "eu-west-2", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",)),
    (("p5e.48xlarge",),
     ("ap-southeast-2", "ap-southeast-3", "eu-north-1", "eu-west-2", "sa-east-1", "us-east-2", "us-west-2",)),
    (("p6-b200.48xlarge",),
     ("ap-south-1", "ap-south-2", "eu-north-1", "eu-west-3", "us-east-1", "us-east-2", "us-west-2",)),
]

GCE_MACHINE_ZONES: dict[str, dict[str, str]] = {
    m: zones for machines, zones in _GCE_MACHINE_ZONE_GROUPS for m in machines}
EC2_INSTANCE_REGIONS: dict[str, tuple[str, ...]] = {
    i: regions for instance_types, regions in _EC2_INSTANCE_REGION_GROUPS for i in instance_types}
#: The regions moto 5.2.5 records offerings for: an instance type is judged in these regions only.
EC2_OFFERINGS_RECORDED: frozenset[str] = frozenset(EC2_REGION_ZONES)

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


#: ``(key path, zone)`` pairs to judge, and per pool ``(pool name, accelerator type, its zones, own zones?,
#: its machine types)``.
Zoned = list[tuple[str, str]]
PoolZones = list[tuple[str, str, list[str], bool, list[str]]]
Findings = tuple[list[tuple[str, str]], list[str]]

LOCATION_KEY = "cluster.location"


def _nearest(name: str, known: frozenset[str]) -> list[str]:
    return difflib.get_close_matches(name.lower(), sorted(known), n=3, cutoff=0.6)


def gce_region_issue(location: str) -> tuple[str, str] | None:
    """``(cluster.location, message)`` when the location's region is not a recorded Compute Engine region."""
    region = gce_region(location)
    if region in GCE_REGIONS:
        return None
    near = _nearest(region, GCE_REGIONS) or ["us-central1"]
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
                f"zone lists, see gpu_fungibility.zones); regions offering it: {', '.join(regions)}. Choose one "
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


def ec2_region_issue(location: str) -> tuple[str, str] | None:
    """``(cluster.location, message)`` when the location is not an AWS region."""
    if location in EC2_REGIONS:
        return None
    near = _nearest(location, EC2_REGIONS) or ["us-east-1"]
    zone_hint = ""
    if location[:-1] in EC2_REGIONS:
        near, zone_hint = [location[:-1]], f" ({location} is an availability zone: list it in cluster.zones)"
    others = f" (or {', '.join(near[1:])})" if len(near) > 1 else ""
    return (LOCATION_KEY, f"{location!r} is not an AWS region{zone_hint} (the {len(EC2_REGIONS)} regions of "
                          f"botocore 1.44.5's endpoints do not include it); write a region such as {near[0]}{others} "
                          "(`aws ec2 describe-regions` lists those of your account)")


def ec2_findings(location: str, zoned: Zoned, pools: PoolZones) -> Findings:
    """An unknown region (error; its zones are then not judged), and warnings for availability zones the
    recorded region does not list and for instance types not offered in the region as recorded (the
    region prefix of each zone is the EKS composition's own error)."""
    unknown_region = ec2_region_issue(location)
    if unknown_region:
        return [unknown_region], []
    known = ec2_zones(location)
    warnings = [] if known is None else [
        f"{path}: {zone} is not an availability zone of {location} as recorded ({', '.join(known)}; "
        "AZ names map per AWS account: `aws ec2 describe-availability-zones` lists yours)"
        for path, zone in zoned if zone.startswith(location) and zone not in known]
    if location in EC2_OFFERINGS_RECORDED:
        for name, _accelerator, _zones, _own, machines in pools:
            for i, itype in enumerate(machines):
                regions = EC2_INSTANCE_REGIONS.get(itype)
                if regions is not None and location not in regions:
                    warnings.append(
                        f"nodePools.{name}.instanceTypes[{i}]: {itype} is not offered in {location} as recorded "
                        f"(moto 5.2.5's EC2 instance type offerings); regions offering it: {', '.join(regions)}. "
                        "Choose one of those for cluster.location, or another instance type; `make preflight` "
                        "reads the live offering (`aws ec2 describe-instance-type-offerings`)")
    return [], warnings


_AZURE_REGION = re.compile(r"[a-z][a-z0-9]*")


def azure_findings(location: str) -> Findings:
    """An Azure location not shaped like a region's name (``west-europe``, ``West Europe``): an error naming
    the name to write. Which regions exist and which GPU sizes each offers is not recorded here."""
    if _AZURE_REGION.fullmatch(location):
        return [], []
    squeezed = re.sub(r"[^a-z0-9]", "", location.lower())
    hint = f"write {squeezed!r}" if squeezed else "write a region name such as 'westeurope'"
    return [(LOCATION_KEY, f"{location!r} is not an Azure region name: region names are lowercase letters and "
                           f"digits (the name column of `az account list-locations`); {hint}")], []
