"""The machine catalog against real machine data.

GCE: a recorded slice of ``gcloud compute machine-types list`` (tests/fixtures/gce_machine_types.csv).
EC2: the DescribeInstanceTypes data moto ships (vCPUs, memory, GPU count and model), and the ENI figures
AL2023's nodeadm computes maxPods from (tests/fixtures/eks_max_pods.csv).
"""

import re

import pytest
from gpu_fungibility import catalog
from gpu_fungibility.clouds.eks import machines as eks_machines
from gpu_fungibility.clouds.gke import machines as gke_machines

from tests.machine_data import ec2_instance_type, eks_max_pods, gce_machine_types

#: The GPU name EC2 reports per catalog GPU type (DescribeInstanceTypes GpuInfo.Gpus[].Name).
EC2_GPU_NAMES = {"nvidia-tesla-t4": "T4", "nvidia-a10g": "A10G", "nvidia-l4": "L4", "nvidia-l40s": "L40S",
                 "nvidia-tesla-a100": "A100", "nvidia-a100-80gb": "A100", "nvidia-h100-80gb": "H100",
                 "nvidia-h200-141gb": "H200", "nvidia-b200": "B200"}
#: Per-GPU memory EC2 reports may differ from the marketed figure by this much (A10G: 22888 MiB of "24 GB").
GPU_MEMORY_TOLERANCE = 0.10


@pytest.mark.parametrize("name", sorted(gke_machines.MACHINES))
def test_every_gce_shape_matches_compute_engine(name):
    shape, row = gke_machines.MACHINES[name], gce_machine_types().get(name)
    assert row is not None, f"{name}: no row in tests/fixtures/gce_machine_types.csv"
    assert shape.vcpus == int(row["vcpus"]), f"{name}: {shape.vcpus} vCPUs, Compute Engine says {row['vcpus']}"
    assert shape.memory_gib == float(row["memory_gib"]), (
        f"{name}: {shape.memory_gib} GiB, Compute Engine says {row['memory_gib']}")
    if row["accelerator"]:
        assert (shape.accelerator, shape.count) == (row["accelerator"], int(row["accelerators"]))
    counted = re.search(r"-(\d+)[gt]$", name)  # a2/a3/a4 and TPU names carry the count (g2 names do not)
    if counted:
        assert shape.count == int(counted.group(1)), f"{name}: the name says {counted.group(1)}"
    assert row["accelerator"] or counted, f"{name}: no real figure checks its accelerator count"


def test_the_n1_rule_describes_exactly_the_n1_machines_compute_engine_sells():
    rows = {m: r for m, r in gce_machine_types().items() if re.fullmatch(r"n1-(standard|highmem|highcpu)-\d+", m)}
    assert len(rows) >= 20
    for machine, row in rows.items():
        host = catalog.host_shape(machine)
        assert host is not None, machine
        assert (host.vcpus, round(host.memory_gib, 2)) == (int(row["vcpus"]), float(row["memory_gib"])), machine
    for kind, sizes in gke_machines.N1_VCPUS_BY_KIND.items():
        for vcpus in sizes:
            assert f"n1-{kind}-{vcpus}" in rows, f"n1-{kind}-{vcpus} is not a Compute Engine machine type"
    assert catalog.host_shape("n1-highmem-1") is None and catalog.host_shape("n1-highcpu-1") is None


@pytest.mark.parametrize("name", sorted(eks_machines.MACHINES))
def test_every_ec2_shape_matches_describe_instance_types(name):
    shape, real = eks_machines.MACHINES[name], ec2_instance_type(name)
    assert shape.vcpus == real["VCpuInfo"]["DefaultVCpus"]
    assert shape.memory_gib * 1024 == real["MemoryInfo"]["SizeInMiB"]
    (gpus,) = real["GpuInfo"]["Gpus"]
    assert gpus["Manufacturer"] == "NVIDIA" and gpus["Count"] == shape.count
    assert gpus["Name"] == EC2_GPU_NAMES[shape.accelerator]
    model = catalog.GPUS[shape.accelerator]
    assert gpus["Name"] in model.product_name.replace("-", " ").split()
    per_gpu_gib = gpus["MemoryInfo"]["SizeInMiB"] / 1024
    assert abs(per_gpu_gib - model.memory_gib) <= model.memory_gib * GPU_MEMORY_TOLERANCE, (
        f"{name}: {per_gpu_gib:.1f} GiB per GPU, {shape.accelerator} has {model.memory_gib}")


@pytest.mark.parametrize("name", sorted(eks_machines.MACHINES))
def test_every_ec2_shape_has_the_max_pods_nodeadm_computes(name):
    assert eks_machines.MACHINES[name].max_pods == eks_max_pods()[name]
