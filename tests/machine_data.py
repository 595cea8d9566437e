"""Real machine data for tests: the recorded fixtures (GCE, EKS max pods, Azure sizes) and the DescribeInstanceTypes
data moto ships.

``real_host_shape`` describes any machine of those sources (general-purpose ones too, which the catalog
does not carry), so the capacity model can be checked on the machines public measurements used.
"""

import csv
from functools import cache
from pathlib import Path
from typing import Any

from gpu_fungibility import catalog
from moto.ec2.models.instance_types import INSTANCE_TYPES

FIXTURES = Path(__file__).parent / "fixtures"


def read_rows(name: str) -> list[dict[str, str]]:
    """The rows of a fixture CSV (``#`` lines are its provenance)."""
    with (FIXTURES / name).open() as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@cache
def gce_machine_types() -> dict[str, dict[str, str]]:
    return {row["machine"]: row for row in read_rows("gce_machine_types.csv")}


@cache
def eks_max_pods() -> dict[str, int]:
    """nodeadm's maxPods per instance type: default ENIs x (IPv4 per ENI - 1) + 2."""
    return {row["instance_type"]: int(row["default_max_enis"]) * (int(row["ipv4_addresses_per_interface"]) - 1) + 2
            for row in read_rows("eks_max_pods.csv")}


@cache
def azure_general_vm_sizes() -> dict[str, dict[str, str]]:
    return {row["size"]: row for row in read_rows("azure_general_vm_sizes.csv")}


def ec2_instance_type(name: str) -> dict[str, Any]:
    """moto's DescribeInstanceTypes entry for an EC2 instance type (KeyError when moto does not know it)."""
    return INSTANCE_TYPES[name]


def real_host_shape(cloud: str, machine: str) -> catalog.HostShape:
    """vCPUs, nominal memory and max pods of a machine, from real data only (never from the catalog)."""
    if cloud == "gke":
        row = gce_machine_types()[machine]
        return catalog.HostShape(machine, int(row["vcpus"]), float(row["memory_gib"]))
    if cloud == "aks":
        row = azure_general_vm_sizes()[machine]
        return catalog.HostShape(machine, int(row["vcpus"]), float(row["memory_gib"]), int(row["max_pods"]))
    entry = ec2_instance_type(machine)
    return catalog.HostShape(machine, entry["VCpuInfo"]["DefaultVCpus"], entry["MemoryInfo"]["SizeInMiB"] / 1024,
                             eks_max_pods()[machine])
