"""Which availability zones each EC2 region has, and where EKS's GPU instance types are offered, as far as
recorded here (see :mod:`gpu_fungibility.zones` for what an offline zone check judges).

Sources:

- EC2 availability zones per region: the zones of moto 5.2.5's recorded DescribeInstanceTypeOfferings
  (``moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz``), checked against
  that data in tests/test_your_own_stack.py. AZ names map to physical zones per AWS account, and some accounts
  see other letters (us-west-1, ap-northeast-1): an unknown letter is a warning.
- EC2 regions: botocore 1.44.5's ``botocore/data/endpoints.json``, every partition (the commercial regions,
  China, GovCloud, the isolated and sovereign partitions); a region outside it is an error.
- EC2 GPU instance types per region: moto 5.2.5's recorded DescribeInstanceTypeOfferings by region
  (``moto/ec2/resources/instance_type_offerings/region/<region>.json.gz``) for the catalog's instance types;
  regions moto does not record (newer than its data) are not judged.
"""

from ...zones import LOCATION_KEY, Findings, PoolZones, Zoned, nearest

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

EC2_INSTANCE_REGIONS: dict[str, tuple[str, ...]] = {
    i: regions for instance_types, regions in _EC2_INSTANCE_REGION_GROUPS for i in instance_types}

#: The regions moto 5.2.5 records offerings for: an instance type is judged in these regions only.
EC2_OFFERINGS_RECORDED: frozenset[str] = frozenset(EC2_REGION_ZONES)



def ec2_zones(region: str) -> list[str] | None:
    """The recorded availability zones of an EC2 region, or None when the region is not recorded."""
    letters = EC2_REGION_ZONES.get(region)
    return None if letters is None else [f"{region}{c}" for c in letters]



def ec2_region_issue(location: str) -> tuple[str, str] | None:
    """``(cluster.location, message)`` when the location is not an AWS region."""
    if location in EC2_REGIONS:
        return None
    near = nearest(location, EC2_REGIONS) or ["us-east-1"]
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
