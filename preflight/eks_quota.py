"""Which EC2 vCPU quota limits each EKS node group's instance types.

EC2 vCPU quotas in Service Quotas (service code ``ec2``), one per instance family group and
purchase option, in vCPUs: G and VT on-demand ``L-DB2E81BA`` ("Running On-Demand G and VT
instances"), G and VT Spot ``L-3819A6DF`` ("All G and VT Spot Instance Requests"), P on-demand
``L-417A185B`` ("Running On-Demand P instances"), P Spot ``L-7212CCBC`` ("All P Spot Instance
Requests"). Values are vCPUs: the AWS CLI's ``get-aws-default-service-quota`` example for the
Standard family (``L-1216C47A``) shows ``UsageMetric`` dimension ``Resource: vCPU``
(https://docs.aws.amazon.com/cli/latest/userguide/cli_service-quotas_code_examples.html). The four
GPU codes are the ones ``aws service-quotas get-service-quota --service-code ec2 --quota-code ...``
is widely run with; the preflight prints each quota's name as Service Quotas returns it, so a
wrong code would show up as a wrong name in the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Ec2VcpuQuota:
    code: str
    name: str


#: EC2 instance family group -> (on-demand quota, Spot quota), both counted in vCPUs.
EC2_VCPU_QUOTAS: dict[str, tuple[Ec2VcpuQuota, Ec2VcpuQuota]] = {
    "G and VT": (Ec2VcpuQuota("L-DB2E81BA", "Running On-Demand G and VT instances"),
                 Ec2VcpuQuota("L-3819A6DF", "All G and VT Spot Instance Requests")),
    "P": (Ec2VcpuQuota("L-417A185B", "Running On-Demand P instances"),
          Ec2VcpuQuota("L-7212CCBC", "All P Spot Instance Requests")),
}

_FAMILY = re.compile(r"^([a-z]+)\d")


def ec2_family_group(instance_type: str) -> str | None:
    """``g5.12xlarge`` -> ``"G and VT"``, ``p4d.24xlarge`` / ``p6-b200.48xlarge`` -> ``"P"``; else None."""
    match = _FAMILY.match(instance_type)
    if not match:
        return None
    letters = match.group(1)
    if letters in ("g", "vt"):
        return "G and VT"
    if letters == "p":
        return "P"
    return None


def ec2_vcpu_quota(instance_type: str, spot: bool) -> Ec2VcpuQuota | None:
    group = ec2_family_group(instance_type)
    if group is None:
        return None
    on_demand, spot_quota = EC2_VCPU_QUOTAS[group]
    return spot_quota if spot else on_demand
