"""The simulator's new honesty: CPU and memory, undetermined choices, refused claims, spot reclaim."""

from __future__ import annotations

import copy

import pytest
from gpu_fungibility import sizing

from offline_plan.manifests import kubernetes_objects
from offline_plan.run import run_stack_file
from simulator import PENDING, SCHEDULED, UNDETERMINED, SimulationError, render_table, simulate
from simulator.engine import MAX_BRANCHES
from stacks.loader import parse_stack_config
from tests.test_simulator import GKE_DEV, gpu_claim_template, gpu_objects, rows, seed_000_deployment, tpu_objects

#: What one a2-ultragpu-1g node leaves for serving pods: allocatable minus GKE's system pods, the NVIDIA
#: DRA kubelet plugin and the driver installer (tests/test_sizing.py checks the arithmetic).
A100_80_ROOM = sizing.node_room("gke", "a2-ultragpu-1g", "gpu").free


def with_requests(objects: list[dict], cpu: str | None = None, memory: str | None = None) -> list[dict]:
    objects = copy.deepcopy(objects)
    for obj in objects:
        if obj["kind"] == "Deployment":
            for container in obj["spec"]["template"]["spec"]["containers"]:
                requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
                container["resources"]["requests"] = requests
    return objects


@pytest.fixture()
def cfg():
    return parse_stack_config(copy.deepcopy(GKE_DEV))


# ---- CPU and memory -------------------------------------------------------------------------------


def test_a_pod_that_fills_a_node_exactly_fits_and_one_mebibyte_more_does_not(cfg):
    exact = with_requests(gpu_objects(), memory=f"{A100_80_ROOM[1]}Mi")
    assert rows(simulate(cfg, exact)) == [(SCHEDULED, "a100-80gb", 1)]
    over = with_requests(gpu_objects(), memory=f"{A100_80_ROOM[1] + 1}Mi")
    (replica,) = simulate(cfg, over).of("vllm-gpu")
    # The 40GB pool's a2-highgpu-2g has the same memory: no pool's node has room.
    assert replica.status == PENDING
    assert replica.reason.startswith("insufficient memory on running nodes (gke-a100-80gb-0 lacks memory "
                                     f"(requests {A100_80_ROOM[1] + 1}Mi, {A100_80_ROOM[1]}Mi free))")


def test_the_simulator_builds_nodes_from_capacity_not_nominal_memory(cfg):
    """158Gi fitted the a2-ultragpu-1g room computed from nominal memory; a real node has about 156.9 GiB
    allocatable (capacity below nominal), so the simulator leaves such a pod pending."""
    assert A100_80_ROOM[1] < 158 * 1024 < 170 * 1024 - 10241 - 100
    (replica,) = simulate(cfg, with_requests(gpu_objects(), memory="158Gi")).of("vllm-gpu")
    assert replica.status == PENDING and replica.reason.startswith("insufficient memory")


def test_a_pod_no_node_can_hold_says_which_resource_and_pool(cfg):
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["a100-80gb"]["autoscaling"]["min"] = 0
    huge = with_requests(gpu_objects(), cpu="40")
    (replica,) = simulate(parse_stack_config(raw), huge).of("vllm-gpu")
    assert replica.status == PENDING
    assert replica.reason.startswith("insufficient cpu: one a2-ultragpu-1g node of a100-80gb has room for less "
                                     "(cpu (requests 40, 11150m free))")
    assert "one a2-highgpu-2g node of a100-40gb has room for less (cpu (requests 40, 23120m free))" in replica.reason


def test_running_pods_use_up_the_room_of_a_shared_node(cfg):
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared-gpu", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    pod = seed_000_deployment(replicas=3)
    pod["spec"]["template"]["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared-gpu"}]
    half = f"{A100_80_ROOM[0] // 2}m"
    result = simulate(cfg, with_requests([shared, pod], cpu=half))
    first, second, third = result.of("vllm-gpu")
    assert (first.node, second.node) == ("gke-a100-80gb-0", "gke-a100-80gb-0")
    assert third.status == PENDING
    assert third.reason.startswith("insufficient cpu on running nodes (gke-a100-80gb-0 lacks cpu "
                                   f"(requests {half}, 0 free)); no capacity: shared claim default/shared-gpu")


def test_the_shipped_stacks_default_sizes_fit_the_nodes_the_simulator_builds():
    for stack in ("dev", "eks-dev"):
        run = run_stack_file(stack)
        result = simulate(run.config, kubernetes_objects(run))
        assert all(r.status != PENDING for r in result.replicas), render_table(result)


# ---- what the scheduler cannot decide ------------------------------------------------------------


@pytest.fixture(scope="module")
def eks_dev():
    run = run_stack_file("eks-dev")
    return run.config, kubernetes_objects(run)


def _without_preference(objects):
    objects = copy.deepcopy(objects)
    for obj in objects:
        if obj.get("kind") == "Deployment":
            obj["spec"]["template"]["spec"].pop("affinity", None)
    return objects


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_eks_dev_places_the_first_replica_on_the_preferred_l40s(eks_dev, version):
    cfg, objects = eks_dev
    cfg = cfg.model_copy(update={"cluster": cfg.cluster.model_copy(update={"kubernetes_version": version})})
    result = simulate(cfg, objects, replicas={"vllm-gpu": 3})
    first, second, third = result.of("vllm-gpu")
    assert (first.status, first.pool, first.alternatives) == (SCHEDULED, "l40s", ("gpu/l40s",))
    # The l40s node is full: the running a10g-4x node takes the second replica before anything scales up.
    assert (second.status, second.pool, second.tensor_parallel_size) == (SCHEDULED, "a10g-4x", 4)
    assert (third.status, third.pool, third.tensor_parallel_size) == (SCHEDULED, "l40s", 1)
    assert result.branches == 1 and "undetermined" not in render_table(result)


@pytest.mark.parametrize("version", ["1.34", "1.35"])
def test_without_the_preferred_affinity_the_bigger_a10g_node_wins_even_with_dra_scoring(eks_dev, version):
    """The pod is sized for g6e.xlarge: on a g5.12xlarge LeastAllocated scores about 84 points more, more
    than the 26 the 1.35 prioritized-list score gives the first alternative."""
    cfg, objects = eks_dev
    cfg = cfg.model_copy(update={"cluster": cfg.cluster.model_copy(update={"kubernetes_version": version})})
    first = simulate(cfg, _without_preference(objects), replicas={"vllm-gpu": 1}).of("vllm-gpu")[0]
    assert (first.status, first.pool, first.tensor_parallel_size) == (SCHEDULED, "a10g-4x", 4)


def test_identical_running_nodes_of_two_pools_stay_undetermined():
    """aks-dev without its preference: a100spot and a100od run one VM size, and the scores tie."""
    run = run_stack_file("aks-dev")
    result = simulate(run.config, _without_preference(kubernetes_objects(run)), replicas={"vllm-gpu": 2})
    first = result.of("vllm-gpu")[0]
    assert first.status == UNDETERMINED and {o.pool for o in first.outcomes} == {"a100spot", "a100od"}
    assert "scores tie" in first.reason


def test_past_the_branch_limit_later_replicas_list_every_pool_that_could_take_them():
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["a100-80gb"]["autoscaling"] = {"min": 8, "max": 8}
    raw["nodePools"]["a100-40gb"]["autoscaling"] = {"min": 8, "max": 8}
    raw["cluster"].update(kubernetesVersion="1.34", releaseChannel="RAPID")  # 1.34: no DRA scoring
    result = simulate(parse_stack_config(raw), gpu_objects(), replicas={"vllm-gpu": 9})
    assert not result.enumerated and result.branches == 1
    first, *later = result.of("vllm-gpu")
    assert (first.status, first.pool) == (SCHEDULED, "a100-40gb")  # the bigger a2-highgpu-2g, for certain
    # Later ones: both pools within the zone spread's reach (the pools span two zones), then past the limit.
    assert all(r.status == UNDETERMINED for r in later)
    assert {o.pool for o in later[-1].outcomes} == {"a100-80gb", "a100-40gb"}
    assert any(f"more than {MAX_BRANCHES} ways" in w for w in result.warnings)


# ---- claims the allocator refuses ------------------------------------------------------------------


def _template(**alternative) -> list[dict]:
    template = gpu_claim_template()
    template["spec"]["spec"]["devices"]["requests"] = [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", **alternative}}]
    return [template, seed_000_deployment()]


@pytest.mark.parametrize("objects, reason", [
    (_template(allocationMode="all"), "request gpu: unsupported count mode all"),
    (_template(count=33), "number of requested devices 33 exceeds the claim limit of 32"),
    (_template(count=-1), "request gpu: count must be greater than zero"),
    (_template(selectors=[{"notCel": {}}]), "request gpu, selector #0: CEL expression empty"),
])
def test_a_claim_the_allocator_refuses_is_pending_not_scheduled_with_nothing(cfg, objects, reason):
    (replica,) = simulate(cfg, objects).of("vllm-gpu")
    assert replica.status == PENDING and replica.devices == () and replica.tensor_parallel_size is None
    assert replica.reason == f"the allocator refuses claim gpu: {reason}" or reason in replica.reason


def test_a_count_of_zero_is_defaulted_to_one_as_the_api_server_does(cfg):
    """pkg/apis/resource/v1/defaults.go (v1.35.4): an ExactCount request's count 0 is unset and becomes 1; the
    API server accepts the claim (recorded: tests/fixtures/differential/issue38-admission.json)."""
    (replica,) = simulate(cfg, _template(count=0)).of("vllm-gpu")
    assert replica.status != PENDING and len(replica.devices) == 1


def test_the_lower_case_all_of_the_issue_is_refused_for_tpus_too(cfg):
    objects = tpu_objects()
    objects[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "all"
    (replica,) = simulate(cfg, objects).of("vllm-tpu")
    assert (replica.status, replica.tensor_parallel_size) == (PENDING, None)
    assert "unsupported count mode all (Kubernetes knows ExactCount and All, spelled exactly so)" in replica.reason


@pytest.mark.parametrize("constraint, reason", [
    ({"requests": ["gpu"]}, "the allocator refuses claim gpu: constraint #0: empty constraint"),
    ({"distinctAttribute": "gpu.nvidia.com/uuid"}, "the simulator does not model claim gpu: constraint #0"),
])
def test_unknown_constraints_are_not_ignored(cfg, constraint, reason):
    objects = gpu_objects()
    objects[0]["spec"]["spec"]["devices"]["constraints"] = [constraint]
    (replica,) = simulate(cfg, objects).of("vllm-gpu")
    assert replica.status == PENDING and replica.reason.startswith(reason)


# ---- spot reclaim ---------------------------------------------------------------------------------


def test_a_reclaimed_spot_node_moves_its_replica(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 3}, reclaim=["a100-40gb"])
    first, second, third = result.of("vllm-gpu")
    assert (first.pool, second.pool) == ("a100-80gb", "a100-80gb"), "on-demand replicas stay"
    assert third.status == PENDING
    assert third.note == "rescheduled: gke-a100-40gb-0 was reclaimed"
    assert "a100-40gb is reclaimed and stocked out" in third.reason and "a100-80gb is at max" in third.reason
    usage = {p.name: p for p in result.pools}
    assert usage["a100-40gb"].reclaimed == ("gke-a100-40gb-0",) and usage["a100-40gb"].nodes == 0


def test_a_reclaimed_replica_falls_back_to_a_pool_with_room(cfg):
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["a100-80gb"]["autoscaling"]["max"] = 3
    result = simulate(parse_stack_config(raw), gpu_objects(), replicas={"vllm-gpu": 2}, reclaim=["a100-40gb"])
    assert rows(result) == [(SCHEDULED, "a100-80gb", 1), (SCHEDULED, "a100-80gb", 1)]
    assert "reclaim: a100-40gb has no running node to lose" in result.warnings


def test_only_spot_pools_are_reclaimed(cfg):
    with pytest.raises(SimulationError, match="only spot nodes are reclaimed; a100-80gb is on-demand"):
        simulate(cfg, gpu_objects(), reclaim=["a100-80gb"])
    with pytest.raises(SimulationError, match="unknown pool in reclaim: h100"):
        simulate(cfg, gpu_objects(), reclaim=["h100"])


def test_admin_access_replicas_take_no_device(cfg):
    """An adminAccess request may have a device in use and takes none (recorded on kube-scheduler v1.35.4:
    tests/fixtures/differential/reduced-admin-access.json), so replicas pile onto the pool's first GPUs."""
    plain = simulate(cfg, _template(count=1), replicas={"vllm-gpu": 2}).of("vllm-gpu")
    admin = simulate(cfg, _template(count=1, adminAccess=True), replicas={"vllm-gpu": 2}).of("vllm-gpu")
    assert [r.status for r in admin] == [SCHEDULED, SCHEDULED]
    assert admin[0].node == admin[1].node and admin[0].devices == admin[1].devices
    assert {(r.node, r.devices) for r in plain if r.status == SCHEDULED} != {(admin[0].node, admin[0].devices)}
