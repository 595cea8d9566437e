"""The fungibility simulator against the seeds' scenarios.

Objects are built here the way the seeds write them: seed 000's
ResourceClaimTemplate (firstAvailable: one A100 with exactly 80Gi, else two
GPUs) and Deployment, seed 003's TPU claim (``allocationMode: All``) and
seed 002's MIG template (two slices of one GPU, ``matchAttribute`` on
``gpu.nvidia.com/parentUUID``).
"""

from __future__ import annotations

import copy

import pytest

from simulator import (
    PENDING,
    SCHEDULED,
    SimulationError,
    render_markdown,
    render_table,
    simulate,
    to_json,
)
from stacks.loader import parse_stack_config

GKE_DEV = {
    "cluster": {"cloud": "gke", "name": "gpu-fungibility", "location": "us-central1",
                "zones": ["us-central1-c", "us-central1-b"]},
    "nodePools": {
        "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1},
                      "spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 2}},
        "a100-40gb": {"machineType": "a2-highgpu-2g", "accelerator": {"type": "nvidia-tesla-a100", "count": 2},
                      "spot": True, "autoscaling": {"min": 0, "max": 2}},
        "tpu-v6e": {"machineType": "ct6e-standard-1t", "accelerator": {"type": "tpu-v6e-slice", "count": 1},
                    "autoscaling": {"min": 1, "max": 1}, "zones": ["us-central1-b"]},
    },
    "computeClasses": {"vllm-gpu-ccc": {"pools": ["a100-80gb", "a100-40gb"], "consolidationDelayMinutes": 3}},
    "workloads": {
        "vllm-gpu": {"computeClass": "vllm-gpu-ccc", "model": "google/gemma-4-31B-it", "replicas": 1},
        "vllm-tpu": {"pool": "tpu-v6e", "model": "google/gemma-3-1b-it", "replicas": 1},
    },
}

SEED_000_EXPRESSION = "device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')"


def gpu_claim_template(first_selector: str = SEED_000_EXPRESSION, name: str = "gpu-claim") -> dict:
    """Seed 000's ResourceClaimTemplate."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{
            "name": "gpu",
            "firstAvailable": [
                {"name": "a100-80gb", "allocationMode": "ExactCount", "count": 1,
                 "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": first_selector}}]},
                {"name": "a100-40gb-2x", "allocationMode": "ExactCount", "count": 2,
                 "deviceClassName": "gpu.nvidia.com"},
            ],
        }]}}},
    }


def deployment(name: str, claim_ref: dict, *, node_selector: dict | None = None, tolerations: list | None = None,
               replicas: int = 1, container_claims: list | None = None) -> dict:
    pod: dict = {
        "tolerations": tolerations or [],
        "resourceClaims": [claim_ref],
        "containers": [{"name": name, "image": "vllm/vllm-openai:gemma4",
                        "resources": {"claims": container_claims or [{"name": claim_ref["name"]}]}}],
    }
    if node_selector:
        pod["nodeSelector"] = node_selector
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app.kubernetes.io/instance": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": pod}},
    }


def seed_000_deployment(replicas: int = 1) -> dict:
    """Seed 000's vllm-gpu Deployment: compute-class nodeSelector, nvidia.com/gpu toleration."""
    return deployment(
        "vllm-gpu", {"name": "gpu", "resourceClaimTemplateName": "gpu-claim"},
        node_selector={"cloud.google.com/compute-class": "vllm-gpu-ccc"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        replicas=replicas,
    )


def tpu_objects() -> list[dict]:
    """Seed 003: the TPU claim template (All chips) and Deployment tolerating google.com/tpu."""
    template = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "tpu-claim-template", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{
            "name": "tpus", "exactly": {"deviceClassName": "tpu.google.com", "allocationMode": "All"},
        }]}}},
    }
    return [template, deployment(
        "vllm-tpu", {"name": "tpus", "resourceClaimTemplateName": "tpu-claim-template"},
        tolerations=[{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}],
        node_selector={"cloud.google.com/gke-nodepool": "tpu-v6e"},
    )]


@pytest.fixture()
def cfg():
    return parse_stack_config(copy.deepcopy(GKE_DEV))


def gpu_objects(replicas: int = 1) -> list[dict]:
    return [gpu_claim_template(), seed_000_deployment(replicas)]


def rows(result, workload="vllm-gpu"):
    return [(r.status, r.pool, r.tensor_parallel_size) for r in result.of(workload)]


# ------------------------------------------------------------------ seed 000


def test_seed_000_three_replicas_two_on_80gb_one_on_two_40gb(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 3})
    assert rows(result) == [
        (SCHEDULED, "a100-80gb", 1),
        (SCHEDULED, "a100-80gb", 1),
        (SCHEDULED, "a100-40gb", 2),
    ]
    first, second, third = result.of("vllm-gpu")
    assert first.node == "gke-a100-80gb-0"  # the min node that already runs
    assert second.node == "gke-a100-80gb-1"  # scaled up: the preferred pool can still grow
    assert third.devices == ("gpu-0", "gpu-1")
    assert third.alternatives == ("gpu/a100-40gb-2x",)
    assert first.alternatives == ("gpu/a100-80gb",)


def test_seed_000_with_80gb_stocked_out_min_node_still_serves_replica_one(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 3}, stockout={"a100-80gb"})
    assert rows(result) == [
        (SCHEDULED, "a100-80gb", 1),
        (SCHEDULED, "a100-40gb", 2),
        (SCHEDULED, "a100-40gb", 2),
    ]
    nodes = [r.node for r in result.of("vllm-gpu")]
    assert nodes[1] != nodes[2]  # two 40GB nodes, two GPUs each
    usage = {p.name: p for p in result.pools}
    assert usage["a100-80gb"].nodes == 1 and usage["a100-80gb"].stocked_out
    assert usage["a100-40gb"].nodes == 2


def test_more_replicas_than_capacity_are_pending_with_the_reason(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 6})
    placed = result.of("vllm-gpu")
    assert [r.status for r in placed] == [SCHEDULED] * 4 + [PENDING] * 2
    for pending in placed[4:]:
        assert pending.pool is None and pending.node is None and pending.tensor_parallel_size is None
        assert pending.reason.startswith("no capacity:")
        assert "a100-80gb is at max (2 nodes" in pending.reason
        assert "a100-40gb is at max (2 nodes" in pending.reason


def test_everything_stocked_out_reports_stocked_out(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 2}, stockout={"a100-80gb", "a100-40gb"})
    first, second = result.of("vllm-gpu")
    assert first.status == SCHEDULED and first.pool == "a100-80gb"
    assert second.status == PENDING
    assert second.reason.startswith("stocked out:")
    assert "a100-40gb is stocked out (0 nodes running" in second.reason


def test_without_the_compute_class_toleration_gke_adds_the_pod_still_lands(cfg):
    # The pod tolerates only nvidia.com/gpu, as in seed 000; the compute-class taint is GKE's to tolerate.
    result = simulate(cfg, gpu_objects())
    assert rows(result) == [(SCHEDULED, "a100-80gb", 1)]


def test_a_pod_that_does_not_tolerate_the_gpu_taint_matches_no_pool(cfg):
    objects = gpu_objects()
    objects[1]["spec"]["template"]["spec"]["tolerations"] = []
    result = simulate(cfg, objects)
    (only,) = result.of("vllm-gpu")
    assert only.status == PENDING
    assert only.reason.startswith("no matching pool")


# ------------------------------------------------------------------ TPU (seed 003)


def test_tpu_workload_takes_all_chips_of_the_v6e_node(cfg):
    result = simulate(cfg, tpu_objects(), replicas={"vllm-tpu": 2})
    first, second = result.of("vllm-tpu")
    assert (first.status, first.pool, first.devices, first.tensor_parallel_size) == (
        SCHEDULED, "tpu-v6e", ("accel0",), 1)
    assert second.status == PENDING
    assert "tpu-v6e is at max (1 node" in second.reason


def test_tpu_all_mode_counts_every_chip_of_a_larger_host():
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["tpu-v6e"].update(machineType="ct6e-standard-4t", accelerator={"type": "tpu-v6e-slice",
                                                                                   "count": 4})
    result = simulate(parse_stack_config(raw), tpu_objects())
    (only,) = result.of("vllm-tpu")
    assert only.devices == ("accel0", "accel1", "accel2", "accel3")
    assert only.tensor_parallel_size == 4


def test_gpu_and_tpu_workloads_do_not_mix(cfg):
    result = simulate(cfg, gpu_objects() + tpu_objects(), replicas={"vllm-gpu": 1, "vllm-tpu": 1})
    assert [(r.workload, r.pool) for r in result.replicas] == [("vllm-gpu", "a100-80gb"), ("vllm-tpu", "tpu-v6e")]


# ------------------------------------------------------------------ selectors


def test_a_selector_that_matches_nothing_leaves_the_pod_pending(cfg):
    template = gpu_claim_template()
    template["spec"]["spec"]["devices"]["requests"][0] = {
        "name": "gpu",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1, "selectors": [{"cel": {
            "expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}]},
    }
    result = simulate(cfg, [template, seed_000_deployment()])
    (only,) = result.of("vllm-gpu")
    assert only.status == PENDING
    assert only.reason.startswith("no alternative matches")
    assert "a100-80gb" in only.reason and "a100-40gb" in only.reason


def test_exact_80gi_misses_an_h100_that_publishes_81559mi():
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["a100-80gb"].update(machineType="a3-highgpu-1g",
                                         accelerator={"type": "nvidia-h100-80gb", "count": 1})
    result = simulate(parse_stack_config(raw), gpu_objects())
    (only,) = result.of("vllm-gpu")
    # the H100 node exists but memory == 80Gi fails: the fallback (2 GPUs) fits no H100 node either,
    # so the autoscaler grows the 40GB pool
    assert (only.pool, only.tensor_parallel_size) == ("a100-40gb", 2)


def test_a_memory_range_selector_with_compare_to_matches_the_h100():
    raw = copy.deepcopy(GKE_DEV)
    raw["nodePools"]["a100-80gb"].update(machineType="a3-highgpu-1g",
                                         accelerator={"type": "nvidia-h100-80gb", "count": 1})
    objects = [gpu_claim_template(
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0"), seed_000_deployment()]
    (only,) = simulate(parse_stack_config(raw), objects).of("vllm-gpu")
    assert (only.pool, only.tensor_parallel_size) == ("a100-80gb", 1)


def test_a_cel_runtime_error_aborts_scheduling_with_the_error(cfg):
    template = gpu_claim_template("device.attributes['gpu.nvidia.com'].profile == '3g.40gb'")
    (only,) = simulate(cfg, [template, seed_000_deployment()]).of("vllm-gpu")
    assert only.status == PENDING
    assert only.reason.startswith("CEL runtime error: no such key: profile")


def test_a_selector_the_api_server_would_reject_is_reported(cfg):
    template = gpu_claim_template("device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')")
    (only,) = simulate(cfg, [template, seed_000_deployment()]).of("vllm-gpu")
    assert only.status == PENDING
    assert "rejects the claim's selector" in only.reason and "_>=_" in only.reason


def test_stack_device_class_selectors_are_anded_with_the_request(cfg):
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "high-memory-gpu"},
                    "spec": {"selectors": [{"cel": {"expression": (
                        "device.driver == 'gpu.nvidia.com' && "
                        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('60Gi')) >= 0")}}]}}
    template = gpu_claim_template()
    template["spec"]["spec"]["devices"]["requests"][0] = {
        "name": "gpu", "exactly": {"deviceClassName": "high-memory-gpu", "count": 1}}
    result = simulate(cfg, [device_class, template, seed_000_deployment()], replicas={"vllm-gpu": 3})
    assert [(r.status, r.pool) for r in result.of("vllm-gpu")] == [
        (SCHEDULED, "a100-80gb"), (SCHEDULED, "a100-80gb"), (PENDING, None)]
    assert result.of("vllm-gpu")[2].reason.startswith("no capacity: a100-80gb is at max")


def test_a_missing_device_class_is_reported(cfg):
    template = gpu_claim_template()
    template["spec"]["spec"]["devices"]["requests"][0] = {
        "name": "gpu", "exactly": {"deviceClassName": "no-such-class", "count": 1}}
    (only,) = simulate(cfg, [template, seed_000_deployment()]).of("vllm-gpu")
    assert only.reason == "DeviceClass no-such-class does not exist"


def test_a_missing_claim_template_is_reported(cfg):
    (only,) = simulate(cfg, [seed_000_deployment()]).of("vllm-gpu")
    assert only.reason == "ResourceClaimTemplate default/gpu-claim does not exist"


# ------------------------------------------------------------------ MIG (seed 002)

MIG_RAW = {
    "cluster": {"cloud": "gke", "name": "mig", "location": "us-central1", "zones": ["us-central1-c"]},
    "nodePools": {"a100-mig": {"machineType": "a2-ultragpu-2g", "accelerator": {"type": "nvidia-a100-80gb",
                                                                                "count": 2},
                               "autoscaling": {"min": 1, "max": 1}}},
    "workloads": {"mig-inference": {"pool": "a100-mig", "mig": [
        {"name": "large-slice", "profile": "3g.40gb", "model": "Qwen/Qwen2.5-7B-Instruct", "port": 8000},
        {"name": "small-slice", "profile": "1g.10gb", "model": "BAAI/bge-base-en-v1.5", "port": 8001},
    ]}},
}


def mig_objects(constraint: bool = True, replicas: int = 1) -> list[dict]:
    requests = [
        {"name": "large-slice", "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}]}},
        {"name": "small-slice", "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}},
    ]
    devices: dict = {"requests": requests}
    if constraint:
        devices["constraints"] = [{"requests": ["large-slice", "small-slice"],
                                   "matchAttribute": "gpu.nvidia.com/parentUUID"}]
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "mig-mixed-workload", "namespace": "default"},
                "spec": {"spec": {"devices": devices}}}
    pod = deployment("mig-inference", {"name": "mig-devices", "resourceClaimTemplateName": "mig-mixed-workload"},
                     tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}], replicas=replicas,
                     container_claims=[{"name": "mig-devices", "request": "large-slice"}])
    return [template, pod]


def test_mig_slices_come_from_the_same_physical_gpu():
    cfg = parse_stack_config(copy.deepcopy(MIG_RAW))
    result = simulate(cfg, mig_objects(), replicas={"mig-inference": 3})
    first, second, third = result.of("mig-inference")
    # each A100 80GB is cut into 3g.40gb + 1g.10gb; two GPUs -> two replicas
    assert first.devices == ("gpu-0-mig-3g40gb-9-4", "gpu-0-mig-1g10gb-19-0")
    assert second.devices == ("gpu-1-mig-3g40gb-9-4", "gpu-1-mig-1g10gb-19-0")
    assert first.tensor_parallel_size == 1  # the serving container sees its one slice
    assert third.status == PENDING and "a100-mig is at max (1 node" in third.reason


def test_mig_constraint_refuses_slices_of_different_gpus():
    from simulator.allocator import Allocator
    from simulator.cluster import ClusterBuilder
    from simulator.workloads import device_classes, pod_specs

    cfg = parse_stack_config(copy.deepcopy(MIG_RAW))
    objects = mig_objects()
    (pod,) = pod_specs(cfg, objects)
    node = ClusterBuilder(cfg).node("a100-mig", 0)
    # the 1g.10gb slice of gpu-0 and the 3g.40gb slice of gpu-1 are taken: what is left spans two GPUs
    taken = frozenset({f"{node.name}/gpu-0-mig-1g10gb-19-0", f"{node.name}/gpu-1-mig-3g40gb-9-4"})
    allocator = Allocator(device_classes(objects)[0])
    assert allocator.allocate(pod.claims, node, taken) is None
    (unconstrained,) = pod_specs(cfg, mig_objects(constraint=False))
    picks = allocator.allocate(unconstrained.claims, node, taken)
    assert [p.device.name for p in picks] == ["gpu-0-mig-3g40gb-9-4", "gpu-1-mig-1g10gb-19-0"]


# ------------------------------------------------------------------ shared claims


def test_a_shared_claim_is_allocated_once_and_pins_its_pods(cfg):
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared-inference-gpu", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    tolerate = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    selector = {"cloud.google.com/compute-class": "vllm-gpu-ccc"}
    qwen = deployment("qwen", {"name": "shared-gpu", "resourceClaimName": "shared-inference-gpu"},
                      tolerations=tolerate, node_selector=selector, replicas=2)
    embed = deployment("embedding", {"name": "shared-gpu", "resourceClaimName": "shared-inference-gpu"},
                       tolerations=tolerate, node_selector=selector)
    result = simulate(cfg, [shared, qwen, embed, *gpu_objects()], replicas={"vllm-gpu": 1})
    placements = {(r.workload, r.replica): r for r in result.replicas}
    nodes = {r.node for key, r in placements.items() if key[0] != "vllm-gpu"}
    assert nodes == {"gke-a100-80gb-0"}
    assert all(r.devices == ("gpu-0",) for key, r in placements.items() if key[0] != "vllm-gpu")
    # the shared GPU is in use: the next workload needs a new node
    assert placements[("vllm-gpu", 1)].node == "gke-a100-80gb-1"


# ------------------------------------------------------------------ EKS


def test_eks_dra_node_group_at_zero_cannot_scale_up():
    raw = {
        "cluster": {"cloud": "eks", "name": "eks-dev", "location": "us-east-1", "zones": ["us-east-1a", "us-east-1b"]},
        "nodePools": {
            "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1},
                     "autoscaling": {"min": 1, "max": 2}},
            "a10g": {"instanceTypes": ["g5.xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 1},
                     "autoscaling": {"min": 0, "max": 2}},
        },
        "computeClasses": {"gpus": {"pools": ["l40s", "a10g"]}},
        "workloads": {"vllm": {"computeClass": "gpus", "model": "m"}},
    }
    cfg = parse_stack_config(raw)
    template = gpu_claim_template("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L40S'")
    template["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"][1]["count"] = 1
    pod = deployment("vllm", {"name": "gpu", "resourceClaimTemplateName": "gpu-claim"},
                     tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    result = simulate(cfg, [template, pod], replicas={"vllm": 3})
    assert [(r.status, r.pool) for r in result.of("vllm")] == [
        (SCHEDULED, "l40s"), (SCHEDULED, "l40s"), (PENDING, None)]
    reason = result.of("vllm")[2].reason
    assert "l40s is at max" in reason and "a10g has no node" in reason


# ------------------------------------------------------------------ API, rendering


def test_unknown_workload_or_pool_is_an_error(cfg):
    with pytest.raises(SimulationError, match="unknown workload: nope"):
        simulate(cfg, gpu_objects(), replicas={"nope": 1})
    with pytest.raises(SimulationError, match="unknown pool in stockout: h100"):
        simulate(cfg, gpu_objects(), stockout={"h100"})


def test_json_has_exactly_the_issue_shape(cfg):
    data = to_json(simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 6}))
    assert set(data) == {"kubernetesVersion", "outcomesFollowed", "enumerated", "replicas", "pools", "warnings"}
    assert (data["kubernetesVersion"], data["outcomesFollowed"], data["enumerated"]) == ("1.35", 1, True)
    keys = {"workload", "replica", "status", "pool", "node", "devices", "tensorParallelSize", "alternatives",
            "reason", "note", "movesBack", "outcomes"}
    assert all(set(r) == keys for r in data["replicas"])
    assert data["replicas"][2] == {"workload": "vllm-gpu", "replica": 3, "status": "scheduled",
                                   "pool": "a100-40gb", "node": "gke-a100-40gb-0", "devices": ["gpu-0", "gpu-1"],
                                   "tensorParallelSize": 2, "alternatives": ["gpu/a100-40gb-2x"], "reason": None,
                                   "note": None, "outcomes": [],
                                   "movesBack": "nothing moves it back to a100-80gb "
                                                "(set computeClasses.vllm-gpu-ccc.activeMigration.optimizeRulePriority: true)"}
    assert data["replicas"][5]["status"] == "pending" and data["replicas"][5]["tensorParallelSize"] is None


def test_table_and_markdown_show_every_replica(cfg):
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 5})
    table = render_table(result)
    assert table.splitlines()[0].split() == ["WORKLOAD", "REPLICA", "STATUS", "POOL", "NODE", "DEVICES", "TP",
                                             "ALTERNATIVE", "REASON"]
    assert table.splitlines()[3].split()[7] == "gpu/a100-40gb-2x", "the chosen firstAvailable alternative"
    assert table.splitlines()[3].endswith("nothing moves it back to a100-80gb "
                                          "(set computeClasses.vllm-gpu-ccc.activeMigration.optimizeRulePriority: true)")
    assert "4/5 replicas scheduled" in table
    assert "a100-40gb: 2 nodes (min 0, max 2), 4/4 devices in use" in table
    markdown = render_markdown(result)
    assert markdown.count("| vllm-gpu |") == 5
    assert "| a100-80gb | 2 | 1 | 2 | 2/2 | no |" in markdown


def test_resource_scores_decide_at_1_34_and_the_better_ranked_alternative_from_1_35():
    # Both pools have a running node; the seed's pod carries no preferred affinity. At 1.34 the scores of
    # the default profile pick the bigger a2-highgpu-2g (24 vCPUs against 12: LeastAllocated); from 1.35
    # DynamicResources adds 26 points for the claim's first alternative (a100-80gb), which is enough here.
    raw = copy.deepcopy(GKE_DEV)
    raw["computeClasses"]["vllm-gpu-ccc"]["pools"] = ["a100-40gb", "a100-80gb"]
    raw["nodePools"]["a100-40gb"]["autoscaling"]["min"] = 1
    raw["cluster"].update(kubernetesVersion="1.34", releaseChannel="RAPID")  # no recorded default lifts it
    assert rows(simulate(parse_stack_config(raw), gpu_objects())) == [(SCHEDULED, "a100-40gb", 2)]
    raw["cluster"]["kubernetesVersion"] = "1.35"
    scored = simulate(parse_stack_config(raw), gpu_objects())
    assert rows(scored) == [(SCHEDULED, "a100-80gb", 1)]


def test_replicas_pending_once_the_cluster_is_full_are_one_run(cfg):
    # The 5th replica finds every pool at max: the later ones meet the same cluster, so they are counted, not
    # placed, and the table shows them as one line; iterating, indexing and the JSON still give every replica.
    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": 1000})
    assert len(result.replicas) == 1000 and [r.replica for r in result.replicas] == list(range(1, 1001))
    assert result.replicas.runs[-1][1] == 995
    last = result.replicas[-1]
    assert (last.replica, last.status, last.reason) == (1000, PENDING, result.replicas[4].reason)
    assert result.replicas[4:6] == list(result.replicas)[4:6]
    table = render_table(result)
    assert len(table.splitlines()) < 20
    assert "vllm-gpu  6-1000" in table and f"995 more replicas pending: {last.reason}" in table
    assert "4/1000 replicas scheduled" in table
    data = to_json(result)
    assert [r["replica"] for r in data["replicas"]] == list(range(1, 1001))
    assert data["replicas"][999]["status"] == "pending" and data["replicas"][999]["reason"] == last.reason


@pytest.mark.parametrize("count", [0, 6, 40])
def test_streamed_json_is_the_same_text(cfg, count):
    import io
    import json

    from simulator.render import write_json

    result = simulate(cfg, gpu_objects(), replicas={"vllm-gpu": count})
    out = io.StringIO()
    write_json(result, out.write)
    assert out.getvalue() == json.dumps(to_json(result), indent=2)
