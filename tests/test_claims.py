"""Claims generated from the stack config: one ordered pool list drives firstAvailable.

Every scenario runs the in-cluster layer under Pulumi mocks and asserts on
the objects the mocks receive (camelCase, integers as numbers).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from gpu_fungibility import claims, device_selectors, dra_cel
from gpu_fungibility.catalog import GPUS

from offline_plan.run import read_stack_file
from stacks import arguments
from stacks.loader import ConfigError, parse_stack_config
from tests.in_cluster_harness import EKS_BASE, GKE_BASE, run_in_cluster
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = list(SHIPPED_STACKS)  # a user's own Pulumi.<stack>.yaml is not the tests' business

GKE_GPU_POOLS = {
    "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1}},
    "a100-40gb": {"machineType": "a2-highgpu-2g", "accelerator": {"type": "nvidia-tesla-a100", "count": 2}},
    "h100": {"machineType": "a3-highgpu-2g", "accelerator": {"type": "nvidia-h100-80gb", "count": 2}},
    "l4x4": {"machineType": "g2-standard-48", "accelerator": {"type": "nvidia-l4", "count": 4}},
    "l4": {"machineType": "g2-standard-4", "accelerator": {"type": "nvidia-l4", "count": 1}},
}
GKE_TPU_POOLS = {
    "v6e": {"machineType": "ct6e-standard-4t", "accelerator": {"type": "tpu-v6e-slice", "count": 4}},
    "v5e": {"machineType": "ct5lp-hightpu-4t", "accelerator": {"type": "tpu-v5-lite-podslice", "count": 4}},
}


def gke_config(pools: list[str], **workload) -> dict:
    every = {**GKE_GPU_POOLS, **GKE_TPU_POOLS}
    return {
        **copy.deepcopy(GKE_BASE),
        "nodePools": {p: every[p] for p in pools},
        "computeClasses": {"fungible": {"pools": pools}},
        "workloads": {"serve": {"computeClass": "fungible", "model": "org/model", **workload}},
    }


def template_requests(run, workload: str) -> list[dict]:
    return run.object("ResourceClaimTemplate", f"{workload}-claim")["spec"]["spec"]["devices"]["requests"]


def alternatives(run, workload: str) -> list[dict]:
    requests = template_requests(run, workload)
    assert len(requests) == 1, "one request whose firstAvailable holds the alternatives"
    return requests[0]["firstAvailable"]


# ---------------------------------------------------------------- one source of truth


@pytest.mark.parametrize("stack", SHIPPED)
def test_claim_alternatives_follow_the_compute_class_order_in_every_shipped_stack(stack):
    stack_file = read_stack_file(stack)
    cfg = parse_stack_config(stack_file.namespace_config)
    run = run_in_cluster(stack_file.namespace_config, stack=stack)
    checked = 0
    for name, workload in cfg.workloads.items():
        if not workload.compute_class or workload.mig:
            continue
        pools = cfg.compute_classes[workload.compute_class].pools
        alts = alternatives(run, name)
        assert [a["name"] for a in alts] == pools, f"{stack}: workloads.{name}"
        for alt, pool_name in zip(alts, pools, strict=True):
            pool = cfg.node_pools[pool_name]
            if pool.family == "gpu":
                assert alt["deviceClassName"] == "gpu.nvidia.com"
                assert alt["allocationMode"] == "ExactCount"
                assert alt["count"] == pool.accelerator.count
            else:
                assert alt["deviceClassName"] == "tpu.google.com"
                assert alt["allocationMode"] == "All" and "count" not in alt
            assert [s["cel"]["expression"] for s in alt["selectors"]] == [
                device_selectors.accelerator_selector(pool.accelerator.type)]
        checked += 1
    assert checked or not any(w.compute_class for w in cfg.workloads.values())


@pytest.mark.parametrize("stack", SHIPPED)
def test_compute_class_priorities_and_claim_alternatives_agree_in_the_whole_plan(stack):
    from offline_plan.run import run_stack_file

    run = run_stack_file(stack)
    objects = [r.inputs for r in run.resources if r.custom and "kind" in r.inputs]
    templates = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ResourceClaimTemplate"}
    classes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ComputeClass"}
    for name, workload in run.config.workloads.items():
        if not workload.compute_class or workload.mig:
            continue
        (request,) = templates[f"{name}-claim"]["spec"]["spec"]["devices"]["requests"]
        claimed = [a["name"] for a in request["firstAvailable"]]
        assert claimed == run.config.compute_classes[workload.compute_class].pools
        if run.config.cluster.cloud == "gke":
            priorities = classes[workload.compute_class]["spec"]["priorities"]
            assert [p for entry in priorities for p in entry["nodepools"]] == claimed, f"{stack}: {name}"


def test_dev_stack_reproduces_seed_000_claim():
    run = run_in_cluster(read_stack_file("dev").namespace_config, stack="dev")
    alts = alternatives(run, "vllm-gpu")
    assert [(a["name"], a["count"]) for a in alts] == [("a100-80gb", 1), ("a100-40gb", 2)]
    assert template_requests(run, "vllm-gpu")[0]["name"] == "gpu"


@pytest.mark.parametrize("order", [
    ["a100-80gb", "a100-40gb", "h100", "l4x4"],
    ["l4x4", "h100", "a100-40gb", "a100-80gb"],
    ["h100", "a100-80gb"],
])
def test_reordering_the_compute_class_reorders_the_claim(order):
    run = run_in_cluster(gke_config(order))
    alts = alternatives(run, "serve")
    assert [a["name"] for a in alts] == order
    counts = {"a100-80gb": 1, "a100-40gb": 2, "h100": 2, "l4x4": 4}
    assert [a["count"] for a in alts] == [counts[p] for p in order]


def test_reversed_shipped_dev_stack_reverses_the_claim():
    raw = copy.deepcopy(read_stack_file("dev").namespace_config)
    for cc in raw["computeClasses"].values():
        cc["pools"] = list(reversed(cc["pools"]))
    run = run_in_cluster(raw)
    assert [a["name"] for a in alternatives(run, "vllm-gpu")] == ["a100-40gb", "a100-80gb"]


def test_each_alternative_selects_its_pool_accelerator_with_a_real_cel_engine():
    run = run_in_cluster(gke_config(["a100-80gb", "a100-40gb", "h100", "l4x4"]))
    from tests.test_device_selectors import GPU_DEVICES

    for alt in alternatives(run, "serve"):
        accelerator = GKE_GPU_POOLS[alt["name"]]["accelerator"]["type"]
        expression = alt["selectors"][0]["cel"]["expression"]
        chosen = [t for t, d in GPU_DEVICES.items() if dra_cel.matches(expression, d)]
        assert chosen == [accelerator], f"{alt['name']}: {expression}"


# ---------------------------------------------------------------- request shapes


def test_pool_workload_gets_a_single_exact_request():
    cfg = gke_config(["a100-40gb"])
    cfg["workloads"] = {"pinned": {"pool": "a100-40gb", "model": "m"}}
    run = run_in_cluster(cfg)
    requests = template_requests(run, "pinned")
    assert len(requests) == 1 and "firstAvailable" not in requests[0]
    exactly = requests[0]["exactly"]
    assert (exactly["deviceClassName"], exactly["allocationMode"], exactly["count"]) == ("gpu.nvidia.com", "ExactCount", 2)
    assert exactly["selectors"][0]["cel"]["expression"] == device_selectors.accelerator_selector("nvidia-tesla-a100")


def test_tpu_pool_claims_all_chips_as_in_seed_003():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    (request,) = template_requests(run, "vllm-tpu")
    assert request["name"] == "tpu"
    assert request["exactly"]["deviceClassName"] == "tpu.google.com"
    assert request["exactly"]["allocationMode"] == "All"
    assert "count" not in request["exactly"]


def test_tpu_compute_class_alternatives_use_all_with_a_generation_selector():
    run = run_in_cluster(gke_config(["v6e", "v5e"]))
    alts = alternatives(run, "serve")
    assert [(a["name"], a["deviceClassName"], a["allocationMode"]) for a in alts] == [
        ("v6e", "tpu.google.com", "All"), ("v5e", "tpu.google.com", "All")]
    assert all("count" not in a for a in alts)
    from tests.test_device_selectors import TPU_DEVICES

    assert dra_cel.matches(alts[0]["selectors"][0]["cel"]["expression"], TPU_DEVICES["tpu-v6e-slice"])
    assert not dra_cel.matches(alts[0]["selectors"][0]["cel"]["expression"], TPU_DEVICES["tpu-v5-lite-podslice"])
    assert dra_cel.matches(alts[1]["selectors"][0]["cel"]["expression"], TPU_DEVICES["tpu-v5-lite-podslice"])


def test_eks_claims_have_the_same_shape():
    cfg = {
        **copy.deepcopy(EKS_BASE),
        "nodePools": {
            "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1},
                     "autoscaling": {"min": 1, "max": 2}},
            "a10g-4": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4},
                       "autoscaling": {"min": 1, "max": 2}},
        },
        "computeClasses": {"fungible": {"pools": ["l40s", "a10g-4"]}},
        "workloads": {"serve": {"computeClass": "fungible", "model": "m"}},
    }
    alts = alternatives(run_in_cluster(cfg), "serve")
    assert [(a["name"], a["count"]) for a in alts] == [("l40s", 1), ("a10g-4", 4)]


# ---------------------------------------------------------------- DeviceClasses and shared claims


def shared_config() -> dict:
    cfg = gke_config(["a100-80gb", "a100-40gb"])
    cfg["deviceClasses"] = {"high-memory-gpu": {"minMemoryGi": 40}}
    cfg["sharedClaims"] = {"shared-inference-gpu": {"computeClass": "fungible", "deviceClass": "high-memory-gpu"}}
    cfg["workloads"] = {
        "qwen": {"sharedClaim": "shared-inference-gpu", "model": "Qwen/Qwen2.5-1.5B-Instruct",
                 "gpuMemoryUtilization": 0.3, "maxModelLen": 2048},
        "embedder": {"sharedClaim": "shared-inference-gpu", "model": "BAAI/bge-base-en-v1.5",
                     "gpuMemoryUtilization": 0.2},
    }
    return cfg


def test_device_class_from_config_is_seed_002_high_memory_gpu():
    run = run_in_cluster(shared_config())
    device_class = run.object("DeviceClass", "high-memory-gpu")
    assert device_class["apiVersion"] == "resource.k8s.io/v1"
    (selector,) = device_class["spec"]["selectors"]
    assert selector["cel"]["expression"] == device_selectors.device_class_expression("gpu.nvidia.com", min_memory_gi=40)
    assert "compareTo(quantity('40Gi')) >= 0" in selector["cel"]["expression"]


def test_shared_claim_is_one_named_claim_both_workloads_reference():
    run = run_in_cluster(shared_config())
    claim = run.object("ResourceClaim", "shared-inference-gpu")
    assert claim["metadata"]["namespace"] == "inference"
    (request,) = claim["spec"]["devices"]["requests"]
    assert [a["name"] for a in request["firstAvailable"]] == ["a100-80gb", "a100-40gb"]
    assert {a["deviceClassName"] for a in request["firstAvailable"]} == {"high-memory-gpu"}
    for name in ("qwen", "embedder"):
        pod = run.object("Deployment", name)["spec"]["template"]["spec"]
        assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "shared-inference-gpu"}]
        assert pod["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert not [o for o in run.objects() if o["kind"] == "ResourceClaimTemplate"], "shared workloads use no template"


def test_shared_claim_waits_for_its_device_class():
    run = run_in_cluster(shared_config())
    claim = run.named("dra-claims-shared-shared-inference-gpu")
    device_class = run.named("dra-claims-deviceclass-high-memory-gpu")
    assert device_class.urn in claim.dependencies, claim.urn
    for name in ("qwen", "embedder"):
        assert claim.urn in run.named(f"{name}-deployment").dependencies


def test_shared_claim_on_a_single_pool_uses_exactly():
    cfg = shared_config()
    cfg["sharedClaims"]["shared-inference-gpu"] = {"pool": "a100-80gb"}
    run = run_in_cluster(cfg)
    (request,) = run.object("ResourceClaim", "shared-inference-gpu")["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com" and request["exactly"]["count"] == 1


# ---------------------------------------------------------------- MIG


def mig_config(slices: list[dict]) -> dict:
    cfg = gke_config(["a100-80gb"])
    cfg["computeClasses"] = {}
    cfg["workloads"] = {"mig-inference": {"pool": "a100-80gb", "replicas": 2, "mig": slices}}
    return cfg


SEED_002_SLICES = [
    {"name": "large-slice", "profile": "3g.40gb", "model": "Qwen/Qwen2.5-7B-Instruct", "port": 8000,
     "extraArgs": ["--enforce-eager"]},
    {"name": "small-slice", "profile": "1g.10gb", "model": "BAAI/bge-base-en-v1.5", "port": 8001},
]


def test_mig_template_requests_each_profile_from_one_parent_gpu():
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    devices = run.object("ResourceClaimTemplate", "mig-inference-claim")["spec"]["spec"]["devices"]
    assert [r["name"] for r in devices["requests"]] == ["large-slice", "small-slice"]
    for request, piece in zip(devices["requests"], SEED_002_SLICES, strict=True):
        assert request["exactly"]["deviceClassName"] == "mig.nvidia.com"
        assert request["exactly"]["count"] == 1
        assert request["exactly"]["selectors"][0]["cel"]["expression"] == device_selectors.mig_slice_selector(
            "nvidia-a100-80gb", piece["profile"])
    assert devices["constraints"] == [
        {"requests": ["large-slice", "small-slice"], "matchAttribute": "gpu.nvidia.com/parentUUID"}]


def test_mig_containers_are_each_bound_to_their_own_request():
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    pod = run.object("Deployment", "mig-inference")["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "mig", "resourceClaimTemplateName": "mig-inference-claim"}]
    bound = {c["name"]: c["resources"]["claims"] for c in pod["containers"]}
    assert bound == {"large-slice": [{"name": "mig", "request": "large-slice"}],
                     "small-slice": [{"name": "mig", "request": "small-slice"}]}
    args = {c["name"]: c["args"] for c in pod["containers"]}
    assert "--model=Qwen/Qwen2.5-7B-Instruct" in args["large-slice"] and "--enforce-eager" in args["large-slice"]
    assert "--port=8001" in args["small-slice"]


def test_single_slice_mig_template_needs_no_constraint():
    run = run_in_cluster(mig_config(SEED_002_SLICES[:1]))
    devices = run.object("ResourceClaimTemplate", "mig-inference-claim")["spec"]["spec"]["devices"]
    assert "constraints" not in devices and len(devices["requests"]) == 1


def test_mig_profile_of_another_gpu_is_a_config_error():
    bad = [{**SEED_002_SLICES[0], "profile": "3g.20gb"}]
    with pytest.raises(ConfigError, match=r"workloads\.mig-inference\.mig\[0\]\.profile"):
        run_in_cluster(mig_config(bad))


# ---------------------------------------------------------------- config errors


def test_more_than_eight_alternatives_is_a_config_error():
    pools = {f"l4-{i}": {"machineType": "g2-standard-4", "accelerator": {"type": "nvidia-l4", "count": 1}}
             for i in range(9)}
    cfg = {**copy.deepcopy(GKE_BASE), "nodePools": pools, "computeClasses": {"fungible": {"pools": list(pools)}},
           "workloads": {"serve": {"computeClass": "fungible", "model": "m"}}}
    with pytest.raises(ConfigError) as err:
        parse_stack_config(cfg)
    assert any(path == "computeClasses.fungible.pools" and "at most 8" in msg for path, msg in err.value.issues)


def test_eight_alternatives_are_accepted():
    pools = {f"l4-{i}": {"machineType": "g2-standard-4", "accelerator": {"type": "nvidia-l4", "count": 1}}
             for i in range(8)}
    cfg = {**copy.deepcopy(GKE_BASE), "nodePools": pools, "computeClasses": {"fungible": {"pools": list(pools)}},
           "workloads": {"serve": {"computeClass": "fungible", "model": "m"}}}
    assert len(alternatives(run_in_cluster(cfg), "serve")) == 8


def test_min_accelerator_memory_names_the_alternative_below_it():
    cfg = gke_config(["a100-80gb", "a100-40gb", "l4x4", "l4"], minAcceleratorMemoryGi=80)
    with pytest.raises(ConfigError) as err:
        parse_stack_config(cfg)
    issues = [(p, m) for p, m in err.value.issues if p == "workloads.serve.minAcceleratorMemoryGi"]
    assert len(issues) == 1, err.value.issues
    assert "alternative l4 " in issues[0][1] and "computeClasses.fungible.pools[3]" in issues[0][1]
    assert "24 GiB" in issues[0][1]
    for fits in ("a100-40gb", "l4x4"):  # 2 x 40 GiB and 4 x 24 GiB meet the minimum
        assert fits not in issues[0][1]


def test_min_accelerator_memory_met_by_every_alternative_is_accepted():
    cfg = gke_config(["a100-80gb", "a100-40gb"], minAcceleratorMemoryGi=80)
    assert [a["name"] for a in alternatives(run_in_cluster(cfg), "serve")] == ["a100-80gb", "a100-40gb"]


def test_tpu_device_class_with_gpu_only_fields_is_refused():
    cfg = gke_config(["v6e"])
    cfg["deviceClasses"] = {"big-tpu": {"driver": "tpu.google.com", "minMemoryGi": 16}}
    with pytest.raises(ConfigError, match=r"deviceClasses\.big-tpu\.minMemoryGi"):
        run_in_cluster(cfg)


def test_shared_claim_with_a_device_class_of_the_other_family_is_refused():
    cfg = gke_config(["v6e"])
    cfg["deviceClasses"] = {"high-memory-gpu": {"minMemoryGi": 40}}
    cfg["sharedClaims"] = {"tpus": {"pool": "v6e", "deviceClass": "high-memory-gpu"}}
    cfg["workloads"]["serve"] = {"sharedClaim": "tpus", "model": "m"}
    with pytest.raises(ConfigError, match=r"sharedClaims\.tpus\.deviceClass"):
        run_in_cluster(cfg)


def test_claim_specs_are_pure_functions_of_the_arguments():
    cfg = parse_stack_config(gke_config(["a100-80gb", "a100-40gb"]))
    templates = arguments.dra_claims(cfg).args["claim_templates"]
    spec = claims.claim_spec(templates["serve"])
    (request,) = spec.devices.requests
    assert [s.name for s in request.first_available] == ["a100-80gb", "a100-40gb"]
    assert [s.count for s in request.first_available] == [1, 2]
    assert GPUS["nvidia-a100-80gb"].product_name in request.first_available[0].selectors[0].cel.expression
    # a workload on a shared claim gets no template of its own: its pods reference the shared claim
    shared = parse_stack_config(shared_config())
    assert "qwen" not in arguments.dra_claims(shared).args["claim_templates"]
    assert arguments.workload_claim(shared, "qwen") == {"claim_name": "shared-inference-gpu"}


def test_claim_templates_are_replaced_not_updated_when_their_spec_changes():
    # The API server refuses any spec update of a ResourceClaim(Template); pulumi-kubernetes would try one.
    from offline_plan.planjson import plan_document
    from offline_plan.run import run_stack_file

    steps = [s["newState"] for s in plan_document(run_stack_file("dev"))["steps"]]
    templates = [s for s in steps if s["type"] == "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"]
    assert templates
    assert all(s.get("replaceOnChanges") == ["spec"] for s in templates)
