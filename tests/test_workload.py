"""The vLLM workload: placement, tolerations, exposure, PDB, secrets, security, schema validity."""

from __future__ import annotations

import copy
import json

import kubernetes_validate
import pytest
from gpu_fungibility import dra_wiring, wiring_keys
from gpu_fungibility.clouds.eks import AWS_LB_INTERNAL, AWS_LB_SCHEME, AWS_LB_TYPE
from gpu_fungibility.clouds.gke import GKE_LB_TYPE
from gpu_fungibility.node_selection import NodeTaint, toleration_tolerates
from pulumi.runtime import rpc

from offline_plan.run import SECRET_MASK, read_stack_file
from stacks import arguments
from stacks.config import DEFAULT_GPU_IMAGE, DEFAULT_TPU_IMAGE
from stacks.loader import ConfigError, parse_stack_config
from tests.in_cluster_harness import EKS_BASE, FAKE_TOKEN, STAND_IN_DRIVER, run_in_cluster
from tests.test_claims import SEED_002_SLICES, gke_config, mig_config, shared_config

EKS_POOLS = {
    "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s", "count": 1},
             "autoscaling": {"min": 1, "max": 2}},
    "a10g-4": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4},
               "autoscaling": {"min": 1, "max": 2}},
}


MASKED_STRING_DATA = (SECRET_MASK, {"hf_api_token": SECRET_MASK})


def eks_config(**workload) -> dict:
    return {
        **copy.deepcopy(EKS_BASE),
        "nodePools": copy.deepcopy(EKS_POOLS),
        "computeClasses": {"fungible": {"pools": ["l40s", "a10g-4"]}},
        "workloads": {"serve": {"computeClass": "fungible", "model": "m", **workload}},
    }


def pod_of(run, name: str) -> dict:
    return run.object("Deployment", name)["spec"]["template"]["spec"]


def tolerates(tolerations: list[dict], taint: NodeTaint) -> bool:
    return any(toleration_tolerates(t, taint) for t in tolerations)


# ---------------------------------------------------------------- placement


def user_taints_config() -> dict:
    raw = gke_config(["a100-80gb", "h100", "l4x4"])
    raw["nodePools"]["h100"]["taints"] = [{"key": "example.com/dedicated", "value": "h100"}]
    raw["nodePools"]["l4x4"]["taints"] = [{"key": "example.com/cheap", "effect": "PreferNoSchedule"}]
    return raw


SCENARIOS = {
    "dev": lambda: read_stack_file("dev").namespace_config,
    "gke-user-taints": user_taints_config,
    "gke-gpu-class": lambda: gke_config(["a100-80gb", "h100", "l4x4"]),
    "gke-tpu-class": lambda: gke_config(["v6e", "v5e"]),
    "gke-shared": shared_config,
    "gke-mig": lambda: mig_config(SEED_002_SLICES),
    "eks-class": eks_config,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_pods_tolerate_every_taint_of_every_pool_their_claim_can_use(scenario):
    raw = SCENARIOS[scenario]()
    cfg = parse_stack_config(raw)
    specs = arguments.pool_specs(cfg)
    run = run_in_cluster(raw)
    for name, workload in cfg.workloads.items():
        pod = pod_of(run, name)
        for pool in cfg.placement_pools(workload):
            for taint in dra_wiring.node_taints(cfg.cluster.cloud, specs[pool]):
                assert tolerates(pod["tolerations"], taint), f"{scenario}/{name} on {pool}: {taint}"


def test_user_taints_of_later_alternatives_are_tolerated():
    keys = [(t["key"], t["effect"]) for t in pod_of(run_in_cluster(user_taints_config()), "serve")["tolerations"]]
    assert ("example.com/dedicated", "NoSchedule") in keys and ("example.com/cheap", "PreferNoSchedule") in keys
    assert len(keys) == len(set(keys)), "each taint is tolerated once"


def test_pods_do_not_tolerate_taints_of_pools_they_cannot_use():
    raw = read_stack_file("dev").namespace_config
    run = run_in_cluster(raw)
    gpu_keys = {t["key"] for t in pod_of(run, "vllm-gpu")["tolerations"]}
    tpu_keys = {t["key"] for t in pod_of(run, "vllm-tpu")["tolerations"]}
    assert wiring_keys.TPU_TAINT_KEY not in gpu_keys and wiring_keys.GPU_TAINT_KEY not in tpu_keys


def test_gke_compute_class_workload_selects_the_class_as_in_seed_000():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    assert pod_of(run, "vllm-gpu")["nodeSelector"] == {"cloud.google.com/compute-class": "vllm-gpu-ccc"}
    assert pod_of(run, "vllm-tpu")["nodeSelector"] == {"cloud.google.com/gke-nodepool": "tpu-v6e"}


def test_gke_node_selector_values_are_labels_the_pool_nodes_carry():
    raw = read_stack_file("dev").namespace_config
    cfg = parse_stack_config(raw)
    specs = arguments.pool_specs(cfg)
    run = run_in_cluster(raw)
    for name, workload in cfg.workloads.items():
        selector = pod_of(run, name)["nodeSelector"]
        for pool in cfg.placement_pools(workload):
            labels = dra_wiring.node_labels(cfg.cluster.cloud, specs[pool])
            assert all(labels.get(k) == v for k, v in selector.items()), f"{name}: {selector} vs {pool}"


def test_eks_workload_is_held_to_the_dra_pools_its_claim_can_use():
    raw = eks_config()
    raw["nodePools"]["t4-classic"] = {"instanceTypes": ["g4dn.xlarge"], "accelerator": {"type": "nvidia-tesla-t4"},
                                      "dra": False, "autoscaling": {"min": 1, "max": 1}}
    cfg = parse_stack_config(raw)
    pod = pod_of(run_in_cluster(raw), "serve")
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.dra": "true"}
    specs = arguments.pool_specs(cfg)
    for pool in cfg.node_pools:
        labels = dra_wiring.node_labels(cfg.cluster.cloud, specs[pool])
        selected = all(labels.get(k) == v for k, v in pod["nodeSelector"].items())
        assert selected == (pool in ("l40s", "a10g-4")), pool
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_eks_selector_keeps_only_labels_every_alternative_carries():
    raw = eks_config()
    raw["nodePools"]["l40s"]["labels"] = {"example.com/tier": "a", "example.com/team": "ml"}
    raw["nodePools"]["a10g-4"]["labels"] = {"example.com/tier": "b", "example.com/team": "ml"}
    selector = pod_of(run_in_cluster(raw), "serve")["nodeSelector"]
    assert selector["example.com/team"] == "ml" and "example.com/tier" not in selector
    raw["workloads"]["serve"] = {"pool": "l40s", "model": "m"}
    assert pod_of(run_in_cluster(raw), "serve")["nodeSelector"]["example.com/tier"] == "a"


# ---------------------------------------------------------------- pod contents


def test_pod_references_its_claim_template():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    pod = pod_of(run, "vllm-gpu")
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "vllm-gpu-claim"}]
    assert pod["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    tpu = pod_of(run, "vllm-tpu")
    assert tpu["resourceClaims"] == [{"name": "tpu", "resourceClaimTemplateName": "vllm-tpu-claim"}]


def test_serving_container_has_shm_probes_and_port():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    pod = pod_of(run, "vllm-gpu")
    (container,) = pod["containers"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}} in pod["volumes"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30 * 60, "model download takes minutes"
    assert "--max-model-len=65536" in container["args"] and "--model=google/gemma-4-31B-it" in container["args"]
    assert "--port=8000" in container["args"] and "--host=0.0.0.0" in container["args"]


def test_optional_server_flags_and_extra_args():
    run = run_in_cluster(gke_config(["a100-80gb"], gpuMemoryUtilization=0.85, extraArgs=["--enable-prefix-caching"],
                                    port=9000))
    args = pod_of(run, "serve")["containers"][0]["args"]
    assert "--gpu-memory-utilization=0.85" in args and "--enable-prefix-caching" in args and "--port=9000" in args
    assert not any(a.startswith("--max-model-len") for a in args)


@pytest.mark.parametrize("flag", ["--tensor-parallel-size=2", "-tp", "--port=1", "--model", "--host=::"])
def test_extra_args_may_not_repeat_managed_flags(flag):
    with pytest.raises(ConfigError, match=r"workloads\.serve\.extraArgs\[0\]"):
        run_in_cluster(gke_config(["a100-80gb"], extraArgs=[flag]))


def test_images_default_per_family():
    raw = read_stack_file("dev").namespace_config
    raw = copy.deepcopy(raw)
    for w in raw["workloads"].values():
        w.pop("image", None)
    run = run_in_cluster(raw)
    assert pod_of(run, "vllm-gpu")["containers"][0]["image"] == DEFAULT_GPU_IMAGE
    assert pod_of(run, "vllm-tpu")["containers"][0]["image"] == DEFAULT_TPU_IMAGE
    assert pod_of(run_in_cluster(read_stack_file("dev").namespace_config), "vllm-gpu")["containers"][0]["image"] == \
        "vllm/vllm-openai:gemma4"


def test_secure_pod_defaults():
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    pod = pod_of(run, "mig-inference")
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in pod["containers"]:
        assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        assert "privileged" not in container["securityContext"]
    namespace = run.object("Namespace", "inference")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"


# ---------------------------------------------------------------- secrets


def test_token_never_appears_in_any_captured_input_or_plan_step():
    from offline_plan import planjson
    from offline_plan.run import PlanRun

    run = run_in_cluster(read_stack_file("dev").namespace_config)
    assert FAKE_TOKEN not in json.dumps([r.inputs for r in run.resources])
    document = planjson.plan_document(PlanRun("test", "gpu-fungibility", run.resources, []))
    assert FAKE_TOKEN not in json.dumps(document)
    assert run.object("Secret", "hf-token")["stringData"] in MASKED_STRING_DATA


def test_token_never_appears_in_any_file_the_offline_plan_writes(tmp_path):
    from offline_plan.run import run_stack
    from offline_plan.write import write_plan

    raw = {**read_stack_file("dev").namespace_config, "hfToken": FAKE_TOKEN,
           "gcp:project": "demo-project", "gcp:region": "us-central1"}
    run = run_stack(raw, stack="tokencheck")
    assert run.of_type("kubernetes:core/v1:Secret"), "the plan holds the token Secret"
    write_plan(run, tmp_path / "out", policy=False, simulate=False)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert any(p.name == "plan.json" for p in files) and any(p.suffix == ".yaml" for p in files)
    for path in files:
        assert FAKE_TOKEN not in path.read_text(), f"{path.name} leaks the token"


def test_token_travels_only_as_a_secret_into_the_kubernetes_secret():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    carriers = [(t, n) for t, n, raw in run.raw if FAKE_TOKEN in json.dumps(raw)]
    assert carriers == [("kubernetes:core/v1:Secret", "ns-inference-hf-token")]
    raw_secret = next(raw for t, n, raw in run.raw if n == "ns-inference-hf-token")
    wrapped = raw_secret["stringData"]
    assert wrapped[rpc._special_sig_key] == rpc._special_secret_sig, "the value is marked secret on the wire"
    assert wrapped["value"] == {"hf_api_token": FAKE_TOKEN}


def test_containers_read_the_token_by_secret_key_ref():
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    for container in pod_of(run, "mig-inference")["containers"]:
        assert container["env"] == [{"name": "HF_TOKEN", "valueFrom": {
            "secretKeyRef": {"name": "hf-token", "key": "hf_api_token"}}}]


def test_a_secret_per_workload_namespace():
    raw = read_stack_file("dev").namespace_config
    raw = copy.deepcopy(raw)
    raw["workloads"]["vllm-tpu"]["namespace"] = "tpu-serving"
    run = run_in_cluster(raw)
    secrets = sorted(o["metadata"]["namespace"] for o in run.objects() if o["kind"] == "Secret")
    assert secrets == ["inference", "tpu-serving"]
    assert run.object("Deployment", "vllm-tpu")["metadata"]["namespace"] == "tpu-serving"
    assert run.object("ResourceClaimTemplate", "vllm-tpu-claim")["metadata"]["namespace"] == "tpu-serving"


def test_kubernetes_owned_namespaces_are_refused():
    with pytest.raises(ConfigError, match=r"workloads\.serve\.namespace"):
        run_in_cluster(gke_config(["a100-80gb"], namespace="default"))


# ---------------------------------------------------------------- Service and PDB


def lb_annotations(service: dict) -> dict:
    """The Service's annotations other than Pulumi's own await setting."""
    return {k: v for k, v in (service["metadata"].get("annotations") or {}).items() if k != "pulumi.com/skipAwait"}


@pytest.mark.parametrize("service", [{}, {"type": "LoadBalancer"}])
def test_up_does_not_wait_for_pods_behind_the_service(service):
    """Pulumi's Service await needs endpoints that target a pod, within 10 minutes; the pods may wait
    longer for a GPU node to scale up from zero, so the Service skips the await like the Deployment."""
    run = run_in_cluster(gke_config(["a100-80gb"], service=service))
    for kind in ("Service", "Deployment"):
        obj = run.object(kind, "serve")
        assert obj["metadata"]["annotations"].get("pulumi.com/skipAwait") == "true", kind


def test_service_is_cluster_internal_by_default():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    service = run.object("Service", "vllm-gpu")
    assert service["spec"]["type"] == "ClusterIP"
    assert lb_annotations(service) == {}
    assert service["spec"]["selector"] == run.object("Deployment", "vllm-gpu")["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}]


@pytest.mark.parametrize(("make", "expected"), [
    (lambda s: gke_config(["a100-80gb"], service=s), {GKE_LB_TYPE: "Internal"}),
    (lambda s: eks_config(service=s),
     {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internal", AWS_LB_INTERNAL: "true"}),
])
def test_load_balancer_is_internal_unless_public(make, expected):
    run = run_in_cluster(make({"type": "LoadBalancer"}))
    service = run.object("Service", "serve")
    assert service["spec"]["type"] == "LoadBalancer"
    assert lb_annotations(service) == expected


def test_public_load_balancer_only_when_asked():
    gke = run_in_cluster(gke_config(["a100-80gb"], service={"type": "LoadBalancer", "public": True}))
    assert lb_annotations(gke.object("Service", "serve")) == {}
    eks = run_in_cluster(eks_config(service={"type": "LoadBalancer", "public": True}))
    annotations = eks.object("Service", "serve")["metadata"]["annotations"]
    assert annotations[AWS_LB_SCHEME] == "internet-facing" and AWS_LB_INTERNAL not in annotations


def test_public_without_load_balancer_is_a_config_error():
    with pytest.raises(ConfigError, match=r"workloads\.serve\.service"):
        parse_stack_config(gke_config(["a100-80gb"], service={"public": True}))


def test_mig_service_exposes_each_slice_port():
    run = run_in_cluster(mig_config(SEED_002_SLICES))
    ports = run.object("Service", "mig-inference")["spec"]["ports"]
    assert [(p["name"], p["port"]) for p in ports] == [("http-0", 8000), ("http-1", 8001)]


@pytest.mark.parametrize(("replicas", "has_pdb"), [(0, False), (1, False), (2, True), (3, True)])
def test_pdb_only_when_more_than_one_replica(replicas, has_pdb):
    run = run_in_cluster(gke_config(["a100-80gb"], replicas=replicas))
    pdbs = [o for o in run.objects() if o["kind"] == "PodDisruptionBudget"]
    assert bool(pdbs) == has_pdb
    if has_pdb:
        assert pdbs[0]["spec"]["maxUnavailable"] == 1
        assert pdbs[0]["spec"]["selector"]["matchLabels"] == run.object(
            "Deployment", "serve")["spec"]["selector"]["matchLabels"]


# ---------------------------------------------------------------- wiring and validity


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_object_validates_strict_for_the_stack_version(scenario):
    raw = SCENARIOS[scenario]()
    version = parse_stack_config(raw).cluster.minor_version
    run = run_in_cluster(raw)
    objects = run.objects()
    assert len(objects) > 3
    for obj in objects:
        if obj["kind"] == "Secret":
            # The SDK marks the whole stringData map secret, so a plan may show it as one mask;
            # validate the shape it has on the cluster: the key it carries, with a masked value.
            assert obj["stringData"] in MASKED_STRING_DATA
            obj = {**obj, "stringData": {"hf_api_token": SECRET_MASK}}
        kubernetes_validate.validate(obj, version, strict=True)


def test_objects_use_the_given_provider_and_live_under_components():
    run = run_in_cluster(shared_config())
    provider = next(r for r in run.resources if r.type == "pulumi:providers:kubernetes")
    components = {r.urn for r in run.resources if not r.custom}
    for r in run.resources:
        if r.custom and r.type.startswith("kubernetes:") and r.name != STAND_IN_DRIVER:
            assert r.provider.startswith(provider.urn), r.urn
            assert r.parent in components, f"{r.urn} is not parented to a component"


def test_workloads_wait_for_the_drivers_and_their_namespace():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    driver = run.named(STAND_IN_DRIVER).urn
    namespace = run.named("ns-inference-namespace").urn

    def waits_for(name: str) -> set[str]:
        """Everything the resource waits for, directly or through what it waits for."""
        seen, todo = set(), list(run.named(name).dependencies)
        while todo:
            urn = todo.pop()
            if urn not in seen:
                seen.add(urn)
                todo += next(r for r in run.resources if r.urn == urn).dependencies
        return seen

    for name in ("dra-claims-template-vllm-gpu", "dra-claims-template-vllm-tpu"):
        deps = run.named(name).dependencies
        assert driver in deps and namespace in deps, name
    # The Deployment waits for its claim template, and so for the drivers the template waits for.
    deployment = run.named("vllm-gpu-deployment").dependencies
    assert run.named("dra-claims-template-vllm-gpu").urn in deployment and namespace in deployment
    assert driver in waits_for("vllm-gpu-deployment")


def test_nothing_to_deploy_creates_nothing():
    raw = gke_config(["a100-80gb"])
    raw["workloads"] = {}
    run = run_in_cluster(raw)
    assert [r.name for r in run.resources if r.type.startswith("gpu-fungibility:")] == []
    assert run.returned == 0


def test_the_created_components_are_returned_for_the_composition():
    run = run_in_cluster(read_stack_file("dev").namespace_config)
    assert run.returned == 4  # one namespace, the DRA claims, two workloads
