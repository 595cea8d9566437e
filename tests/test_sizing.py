"""Serving pods that fit their nodes: allocatable formulas, default sizes, overrides, spot grace."""

from __future__ import annotations

import copy

import pytest
from gpu_fungibility import catalog, clouds, sizing
from gpu_fungibility.clouds.eks import machines as eks_machines
from gpu_fungibility.clouds.gke import machines as gke_machines

from offline_plan.run import read_stack_file
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config
from stacks.rules import config_warnings
from tests.in_cluster_harness import run_in_cluster
from tests.test_claims import SEED_002_SLICES, gke_config, mig_config, shared_config
from tests.test_workload import eks_config, pod_of

GIB = 1024

# ---- the clouds' capacity and allocatable (tests/test_node_capacity.py checks them against real nodes) ----


def test_gke_capacity_is_nominal_memory_less_the_kernel_and_allocatable_less_the_tiers():
    gke = clouds.profile("gke")
    # g2-standard-4: 4 vCPUs, 16 GiB nominal. Kernel: 1/64, 16 MiB, 64 MiB swiotlb, 0.175% (COS), margin 64 MiB.
    nominal = 16 * GIB
    capacity = int(nominal - (nominal / 64 + 16 + 64 + 0.00175 * nominal + 64))
    assert gke.capacity(catalog.host_shape("g2-standard-4")) == (4000, capacity)
    # kube-reserved: 25% of 4000 MiB, 20% of the next 4000, 10% of the next 8000, 6% of the rest (1000-MiB "GB").
    reserved = int(1000 + 800 + 800 + 0.06 * (nominal - 16000))
    assert gke.allocatable(catalog.host_shape("g2-standard-4")) == (3920, capacity - reserved - 100)
    # Up to 1000 MiB GKE reserves a flat 255 MiB; at or below 8 GiB the kernel keeps 8 MiB more, no swiotlb.
    tiny = catalog.HostShape("tiny", 1, 0.5)
    tiny_capacity = int(512 - (512 / 64 + 16 + 8 + 0.00175 * 512 + 64))
    assert gke.allocatable(tiny) == (940, tiny_capacity - 255 - 100)


def test_eks_allocatable_is_capacity_less_nodeadms_reservation():
    eks = clouds.profile("eks")
    # g6e.xlarge: 4 vCPUs, 32 GiB, 58 pods: capacity 97.3% of nominal less 420 MiB; kubeReserved
    # 11 x 58 + 255 MiB, eviction 100Mi.
    capacity = int(32 * GIB * 0.973 - 420)
    assert eks.capacity(catalog.host_shape("g6e.xlarge")) == (4000, capacity)
    assert eks.allocatable(catalog.host_shape("g6e.xlarge")) == (3920, capacity - (11 * 58 + 255) - 100)
    # g5.12xlarge: 48 vCPUs, 192 GiB, 737 pods.
    capacity = int(192 * GIB * 0.973 - 420)
    assert eks.allocatable(catalog.host_shape("g5.12xlarge")) == (48000 - 190, capacity - (11 * 737 + 255) - 100)


@pytest.mark.parametrize("cloud, machine, family", [
    ("gke", "a2-ultragpu-1g", "gpu"), ("gke", "ct6e-standard-1t", "tpu"), ("eks", "g6e.xlarge", "gpu")])
def test_default_requests_keep_the_headroom_below_the_estimate(cloud, machine, family):
    """3% of the allocatable stays unasked: more than the model's spread around measured nodes (1.5%)."""
    from tests.test_node_capacity import TOLERANCE

    assert sizing.HEADROOM_PERCENT / 100 >= 2 * TOLERANCE
    room = sizing.node_room(cloud, machine, family)
    sized = sizing.default_resources([sizing.PoolRoom("pool", (room,))])
    assert sized.memory_mib <= room.free[1] - room.allocatable[1] * 0.03
    assert sized.cpu_m <= room.free[0] - room.allocatable[0] * 0.03


def test_every_catalog_machine_has_its_cpus_and_memory():
    for shape in [*gke_machines.MACHINES.values(), *eks_machines.MACHINES.values()]:
        assert shape.vcpus > 0 and shape.memory_gib > 0, shape.name
        host = catalog.host_shape(shape.name)
        assert (host.vcpus, host.memory_gib) == (shape.vcpus, shape.memory_gib)
    assert all(s.max_pods for s in eks_machines.MACHINES.values()), "EKS reserves memory per pod"
    assert catalog.host_shape("n1-standard-8") == catalog.HostShape("n1-standard-8", 8, 30.0)
    assert catalog.host_shape("n1-standard-7") is None and catalog.host_shape("e9-weird-4") is None


# ---- defaults on the shipped stacks ---------------------------------------------------------------


def _container(run, workload: str) -> dict:
    return pod_of(run, workload)["containers"][0]


@pytest.mark.parametrize("stack, workload, cpu, memory, grace", [
    ("dev", "vllm-gpu", "10700m", "150Gi", 15),    # a2-ultragpu-1g: 156.9 GiB allocatable
    ("dev", "vllm-tpu", "41900m", "156Gi", 15),    # ct6e-standard-1t: 176 GiB nominal, 162.6 GiB allocatable
    ("prod", "vllm-gpu", "10700m", "150Gi", 15),
    ("eks-dev", "vllm-gpu", "3200m", "27Gi", 90),  # g6e.xlarge, the smallest of l40s and a10g-4x
    ("aks-dev", "vllm-gpu", "6900m", "49Gi", 15),  # Standard_NC8as_T4_v3 (t4spot), the smallest of its three
])
def test_shipped_serving_containers_are_sized_to_their_smallest_node(stack, workload, cpu, memory, grace):
    run = run_in_cluster(read_stack_file(stack).namespace_config)
    pod = pod_of(run, workload)
    container = pod["containers"][0]
    assert container["resources"]["requests"] == {"cpu": cpu, "memory": memory}
    assert container["resources"]["limits"] == {"memory": memory}, "memory limit = request: no overcommit"
    assert "cpu" not in container["resources"]["limits"], "no CPU limit: no throttling of the server"
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}} in pod["volumes"]
    assert pod["terminationGracePeriodSeconds"] == grace


@pytest.mark.parametrize("stack", ["dev", "eks-dev", "prod", "aks-dev"])
def test_every_shipped_serving_container_fits_every_machine_it_can_land_on(stack):
    loaded = read_stack_file(stack)
    cfg = parse_stack_config(loaded.namespace_config)
    run = run_in_cluster(loaded.namespace_config)
    for name, wl in cfg.workloads.items():
        pods = arguments.pods_per_node(cfg, name)
        for container in pod_of(run, name)["containers"]:
            requests = container["resources"]["requests"]
            cpu, memory = sizing.parse_cpu(requests["cpu"]), sizing.parse_memory(requests["memory"])
            assert sizing.parse_memory(container["resources"]["limits"]["memory"]) == memory
            for pool in cfg.placement_pools(wl):
                for machine in arguments.machine_types(cfg, pool):
                    room = sizing.node_room(cfg.cluster.cloud, machine, cfg.node_pools[pool].family)
                    # The requests keep the headroom below the node's estimated free room.
                    assert cpu * pods <= room.sizable[0] and memory * pods <= room.sizable[1], (name, pool, machine)
                    allocatable = clouds.profile(cfg.cluster.cloud).allocatable(catalog.host_shape(machine))
                    assert memory < allocatable[1] and cpu < allocatable[0]


def test_pods_that_share_a_node_share_its_room():
    run = run_in_cluster(shared_config())  # qwen and embedder on one shared claim: both pods on one node
    for workload in ("qwen", "embedder"):
        assert _container(run, workload)["resources"]["requests"] == {"cpu": "5300m", "memory": "75Gi"}
    mig = run_in_cluster(mig_config(SEED_002_SLICES))  # two servers per pod: each gets half
    for container in pod_of(mig, "mig-inference")["containers"]:
        assert container["resources"]["requests"] == {"cpu": "5300m", "memory": "75Gi"}


def test_on_demand_only_workloads_keep_the_default_grace_period():
    raw = gke_config(["a100-80gb"])
    raw["nodePools"]["a100-80gb"] = {**raw["nodePools"]["a100-80gb"], "spot": False, "onDemandFallback": True}
    assert "terminationGracePeriodSeconds" not in pod_of(run_in_cluster(raw), "serve")


def test_the_serving_process_gets_sigterm_itself():
    """The entrypoint execs vLLM, so SIGTERM reaches the server, which stops accepting requests at once."""
    command = _container(run_in_cluster(gke_config(["a100-80gb"])), "serve")["command"]
    assert command[-1].rstrip().splitlines()[-1].startswith("exec python3 -m vllm.entrypoints.openai.api_server")
    assert "preStop" not in str(command)


# ---- overrides -----------------------------------------------------------------------------------


def test_resources_can_be_set_per_workload():
    run = run_in_cluster(gke_config(["a100-80gb", "a100-40gb"], resources={"cpu": 8, "memory": "64Gi"}))
    container = _container(run, "serve")
    assert container["resources"]["requests"] == {"cpu": "8", "memory": "64Gi"}
    assert container["resources"]["limits"] == {"memory": "64Gi"}
    partial = _container(run_in_cluster(gke_config(["a100-80gb"], resources={"memory": "32Gi"})), "serve")
    assert partial["resources"]["requests"] == {"cpu": "10700m", "memory": "32Gi"}


def test_a_request_that_does_not_fit_a_pool_names_the_pool_and_the_numbers():
    raw = gke_config(["a100-80gb", "l4"], resources={"memory": "64Gi", "cpu": "3"})
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    message = str(caught.value)
    assert "workloads.serve.resources.memory" in message
    assert ("64Gi does not fit pool l4: one g2-standard-4 node has 13232Mi allocatable, 1344Mi of it kept for "
            "system pods and DaemonSets, so 11888Mi is free") in message
    assert "resources.cpu" not in message, "3 CPUs fit the l4 node (3170m free)"


@pytest.mark.parametrize("resources, key", [
    ({"cpu": "lots"}, "resources.cpu"),
    ({"memory": "-1Gi"}, "resources.memory"),
    ({"cpu": "0.0001"}, "resources.cpu"),
])
def test_an_unreadable_quantity_is_a_config_error(resources, key):
    with pytest.raises(ConfigError, match=rf"workloads\.serve\.{key}"):
        parse_stack_config(gke_config(["a100-80gb"], resources=resources))


def test_an_eks_group_of_mixed_sizes_gets_a_warning():
    raw = eks_config()
    cfg = parse_stack_config(raw)
    assert not [w for w in config_warnings(cfg) if "mixes machine sizes" in w]
    raw = copy.deepcopy(raw)
    raw["nodePools"]["a10g-4"]["instanceTypes"] = ["g5.12xlarge", "g5.24xlarge"]
    (warning,) = [w for w in config_warnings(parse_stack_config(raw)) if "mixes machine sizes" in w]
    assert warning.startswith("nodePools.a10g-4.instanceTypes mixes machine sizes")
    assert "Cluster Autoscaler assumes every node of a group has one shape" in warning


def test_sizing_helpers_read_and_write_kubernetes_quantities():
    assert sizing.parse_cpu("7500m") == 7500 and sizing.parse_cpu("2") == 2000
    assert sizing.parse_memory("1Gi") == 1024 and sizing.parse_memory("80G") == 76293
    assert sizing.format_cpu(11000) == "11" and sizing.format_memory(30495) == "30495Mi"
    assert sizing.ServingResources(1000, 4096).shm_mib == 1024, "small containers give /dev/shm a quarter"
