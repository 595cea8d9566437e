"""Cluster, claim, workload and chart rules, each with hand-built args and a collecting report_violation:
dra-kubernetes-version, claim-shape, claim-follows-compute-class, accelerator-pools-spot,
no-public-inference-endpoint, secrets-from-secret-store, pinned-charts, eks-dra-scale-from-zero."""

import pytest

from policies.rules.capacity import validate_accelerator_pools_spot
from policies.rules.claims import validate_claim_follows_compute_class, validate_claim_shape
from policies.rules.eks import validate_eks_dra_scale_from_zero
from policies.rules.security import (
    validate_no_public_inference_endpoint,
    validate_pinned_charts,
    validate_secrets_from_secret_store,
)
from policies.rules.versions import validate_kubernetes_version
from tests.policy_fixtures import (
    R,
    eks_group,
    eks_stack,
    find,
    gke_stack,
    gpu_claim_template,
    run_resource_rule,
    run_stack_rule,
    service,
)

RESOURCE_RULES = [validate_kubernetes_version, validate_accelerator_pools_spot, validate_no_public_inference_endpoint,
                  validate_secrets_from_secret_store, validate_pinned_charts, validate_eks_dra_scale_from_zero]
STACK_RULES = [validate_claim_shape, validate_claim_follows_compute_class]


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
def test_seed_shaped_stacks_pass(stack):
    for rule in RESOURCE_RULES:
        assert run_resource_rule(rule, stack()).violations == [], rule.__name__
    for rule in STACK_RULES:
        assert run_stack_rule(rule, stack()).violations == [], rule.__name__


def gpu_request(stack):
    return find(stack, "vllm-gpu-template").props["spec"]["spec"]["devices"]["requests"][0]


# ---- dra-kubernetes-version --------------------------------------------------------------------


@pytest.mark.parametrize(("type_", "props", "bad"), [
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "1.34"}, False),
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "1.35.1-gke.1396000"}, False),
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "latest"}, False),
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "1.33"}, True),
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "1.9.7-gke.1"}, True),
    ("gcp:container/cluster:Cluster", {"releaseChannel": {"channel": "REGULAR"}}, True),  # unset: channel default
    ("gcp:container/cluster:Cluster", {"minMasterVersion": "one-thirty-four"}, True),
    ("gcp:container/nodePool:NodePool", {"name": "p"}, False),  # node version follows the master
    ("gcp:container/nodePool:NodePool", {"name": "p", "version": "1.33.5-gke.100"}, True),
    ("aws:eks/cluster:Cluster", {"version": "1.34"}, False),
    ("aws:eks/cluster:Cluster", {"version": "1.30"}, True),
    ("aws:eks/cluster:Cluster", {"name": "c"}, True),
])
def test_kubernetes_version(type_, props, bad):
    found = run_resource_rule(validate_kubernetes_version, [R(type_, "c", props)])
    assert bool(found.violations) is bad, found.messages
    if bad:
        assert "1.34" in found.messages[0]


# ---- claim-shape --------------------------------------------------------------------------------


def test_request_with_both_exactly_and_first_available():
    stack = gke_stack()
    gpu_request(stack)["exactly"] = {"deviceClassName": "gpu.nvidia.com"}
    found = run_stack_rule(validate_claim_shape, stack)
    assert found.violations == [(found.messages[0], find(stack, "vllm-gpu-template").urn)]
    assert "sets both of exactly/firstAvailable" in found.messages[0]


def test_request_with_neither():
    stack = gke_stack()
    request = gpu_request(stack)
    del request["firstAvailable"]
    request["deviceClassName"] = "gpu.nvidia.com"  # the v1beta1 shape
    assert "sets neither" in run_stack_rule(validate_claim_shape, stack).messages[0]


def test_more_than_eight_alternatives():
    stack = gke_stack()
    stack.append(gpu_claim_template("too-many", [(f"alt-{i}", 1, "NVIDIA L4") for i in range(9)]))
    found = run_stack_rule(validate_claim_shape, stack)
    assert len(found.violations) == 1 and "9 firstAvailable subrequests" in found.messages[0]
    stack[-1] = gpu_claim_template("eight", [(f"alt-{i}", 1, "NVIDIA L4") for i in range(8)])
    assert run_stack_rule(validate_claim_shape, stack).violations == []


def test_unknown_device_class_and_one_the_stack_creates():
    stack = gke_stack()
    gpu_request(stack)["firstAvailable"][1]["deviceClassName"] = "high-memory-gpu"
    found = run_stack_rule(validate_claim_shape, stack)
    assert "device class high-memory-gpu" in found.messages[0]
    stack.append(R("kubernetes:resource.k8s.io/v1:DeviceClass", "high-memory-gpu", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "high-memory-gpu"},
        "spec": {"selectors": [{"cel": {"expression":
                                        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}}))
    assert run_stack_rule(validate_claim_shape, stack).violations == []


def test_tpu_class_needs_the_tpu_driver():
    stack = [r for r in gke_stack() if r.name != "tpu-dra"]
    found = run_stack_rule(validate_claim_shape, stack)
    assert [u for _, u in found.violations] == [find(stack, "vllm-tpu-template").urn]
    assert "tpu.google.com" in found.messages[0]


@pytest.mark.parametrize("expression", [
    "device.attributes['gpu.nvidia.com'].productName ==",
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4' &&",
    "",
])
def test_selector_that_does_not_compile(expression):
    stack = gke_stack()
    gpu_request(stack)["firstAvailable"][0]["selectors"][0]["cel"]["expression"] = expression
    found = run_stack_rule(validate_claim_shape, stack)
    assert len(found.violations) == 1 and "does not compile" in found.messages[0]
    assert "a100-80gb" in found.messages[0]


def test_valid_kubernetes_cel_the_engine_lacks_is_not_a_violation():
    stack = gke_stack()
    gpu_request(stack)["firstAvailable"][0]["selectors"][0]["cel"]["expression"] = (
        "cel.bind(p, device.attributes['gpu.nvidia.com'].productName, p == 'NVIDIA A100-SXM4-80GB')")
    assert run_stack_rule(validate_claim_shape, stack).violations == []


def test_device_class_selector_that_does_not_compile():
    stack = gke_stack()
    stack.append(R("kubernetes:resource.k8s.io/v1:DeviceClass", "broken", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "broken"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver = 'gpu.nvidia.com'"}}]}}))
    found = run_stack_rule(validate_claim_shape, stack)
    assert [u for _, u in found.violations] == [stack[-1].urn]


# ---- claim-follows-compute-class -------------------------------------------------------------------


def test_compute_class_order_differs_from_the_claim():
    stack = gke_stack()
    find(stack, "vllm-gpu-ccc").props["spec"]["priorities"].reverse()
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert found.violations == [(found.messages[0], find(stack, "vllm-gpu").urn)]
    assert "[a100-80gb, a100-40gb]" in found.messages[0] and "[a100-40gb, a100-80gb]" in found.messages[0]


def test_claim_missing_an_alternative():
    stack = gke_stack()
    gpu_request(stack)["firstAvailable"].pop()
    assert len(run_stack_rule(validate_claim_follows_compute_class, stack).violations) == 1


def test_workload_selecting_a_compute_class_the_stack_lacks():
    stack = [r for r in gke_stack() if r.name != "vllm-gpu-ccc"]
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert any("selects compute class vllm-gpu-ccc, which the stack does not create" in m for m in found.messages)


def test_compute_class_naming_a_pool_that_does_not_exist():
    stack = gke_stack()
    find(stack, "vllm-gpu-ccc").props["spec"]["priorities"].append({"nodepools": ["h100"]})
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert any("lists node pool h100" in m for m in found.messages)


def test_gke_workload_that_cannot_run_on_an_alternative_pool():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["tolerations"] = []  # GKE taints GPU nodes
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert len(found.violations) == 2
    assert all("nvidia.com/gpu=present:NoSchedule" in m for m in found.messages)


def test_pool_workload_that_fits_no_pool_of_its_family():
    stack = gke_stack()
    find(stack, "vllm-tpu").props["spec"]["template"]["spec"]["nodeSelector"] = {
        "cloud.google.com/gke-nodepool": "tpu-v5e"}
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert [u for _, u in found.violations] == [find(stack, "vllm-tpu").urn]
    assert "fit none of the pools" in found.messages[0]


def test_eks_priorities_reversed():
    stack = eks_stack()
    find(stack, "priority-expander").props["data"]["priorities"] = "10:\n  - .*-a100-.*\n20:\n  - .*-l4-.*\n"
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert len(found.violations) == 1 and "strictly decreasing" in found.messages[0]


def test_eks_alternative_without_a_priority():
    stack = eks_stack()
    find(stack, "priority-expander").props["data"]["priorities"] = "20:\n  - .*-a100-.*\n"
    assert "match no regex" in run_stack_rule(validate_claim_follows_compute_class, stack).messages[0]


def test_eks_without_the_priority_expander():
    stack = [r for r in eks_stack() if r.name != "priority-expander"]
    assert "no cluster-autoscaler-priority-expander" in run_stack_rule(
        validate_claim_follows_compute_class, stack).messages[0]
    stack = eks_stack()
    find(stack, "autoscaler").props["values"]["extraArgs"]["expander"] = "least-waste"
    assert "priority expander" in run_stack_rule(validate_claim_follows_compute_class, stack).messages[0]


def test_eks_workload_affinity_on_the_wrong_node_group_label():
    """EKS labels nodes with the node group's own name, not the pool key."""
    stack = eks_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "eks.amazonaws.com/nodegroup", "operator": "In", "values": ["a100", "l4"]}]}]}}}
    found = run_stack_rule(validate_claim_follows_compute_class, stack)
    assert len(found.violations) == 2
    assert "eks.amazonaws.com/nodegroup=gpu-fungibility-a100" in found.messages[0] + found.messages[1]
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = [
        "gpu-fungibility-a100", "gpu-fungibility-l4"]
    assert run_stack_rule(validate_claim_follows_compute_class, stack).violations == []


# ---- accelerator-pools-spot ---------------------------------------------------------------------------


def test_on_demand_gpu_pool_not_marked_as_fallback():
    stack = gke_stack()
    pool = find(stack, "a100-80gb-pool")
    del pool.props["nodeConfig"]["labels"]["gpu-fungibility/on-demand-fallback"]
    found = run_resource_rule(validate_accelerator_pools_spot, stack)
    assert len(found.violations) == 1 and "a100-80gb" in found.messages[0]
    assert run_resource_rule(validate_accelerator_pools_spot, stack, {"onDemandPools": ["a100-80gb"]}).violations == []
    pool.props["nodeConfig"]["resourceLabels"] = {"on-demand-fallback": "true"}
    assert run_resource_rule(validate_accelerator_pools_spot, stack).violations == []


def test_on_demand_eks_gpu_group_and_cpu_groups():
    found = run_resource_rule(validate_accelerator_pools_spot, [eks_group("h100", "p5.48xlarge", dra=True, spot=False)])
    assert len(found.violations) == 1
    cpu = eks_group("sys", "m6i.large", dra=False, spot=False, ami="AL2023_x86_64_STANDARD")
    assert run_resource_rule(validate_accelerator_pools_spot, [cpu]).violations == []


def test_on_demand_tpu_pool():
    stack = gke_stack()
    find(stack, "tpu-v6e-pool").props["nodeConfig"]["spot"] = False
    assert len(run_resource_rule(validate_accelerator_pools_spot, stack).violations) == 1


# ---- no-public-inference-endpoint ------------------------------------------------------------------------


@pytest.mark.parametrize(("annotations", "public"), [
    ({"networking.gke.io/load-balancer-type": "Internal"}, False),
    ({"cloud.google.com/load-balancer-type": "internal"}, False),
    ({"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}, False),
    ({"service.beta.kubernetes.io/aws-load-balancer-internal": "true"}, False),
    ({}, True),
    ({"service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}, True),
])
def test_load_balancer_services(annotations, public):
    found = run_resource_rule(validate_no_public_inference_endpoint, [service("vllm", lb=True, annotations=annotations)])
    assert bool(found.violations) is public


def test_public_service_allowed_by_config():
    public = [service("demo", lb=True)]
    assert run_resource_rule(validate_no_public_inference_endpoint, public, {"allowedPublicServices": ["demo"]}).violations == []
    assert run_resource_rule(validate_no_public_inference_endpoint, public,
                             {"allowedPublicServices": ["inference/demo"]}).violations == []
    assert len(run_resource_rule(validate_no_public_inference_endpoint, public,
                                 {"allowedPublicServices": ["other/demo"]}).violations) == 1
    assert run_resource_rule(validate_no_public_inference_endpoint, [service("c", lb=False)]).violations == []


# ---- secrets-from-secret-store -----------------------------------------------------------------------------


def container(stack):
    return find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["containers"][0]


def test_literal_token_env():
    stack = gke_stack()
    container(stack)["env"][0] = {"name": "HF_TOKEN", "value": "[secret]"}
    found = run_resource_rule(validate_secrets_from_secret_store, stack)
    assert len(found.violations) == 1 and "HF_TOKEN to a literal value" in found.messages[0]


def test_token_from_a_config_map():
    stack = gke_stack()
    container(stack)["env"][0] = {"name": "HUGGING_FACE_HUB_TOKEN",
                                  "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "token"}}}
    assert "other than a Secret" in run_resource_rule(validate_secrets_from_secret_store, stack).messages[0]


@pytest.mark.parametrize("arg", ["--hf-token=hf_abcdefghijklmnopqrstuvwxyz012345",
                                 "serve --token abc123", "HF_TOKEN=hf_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA vllm serve"])
def test_literal_token_on_the_command_line(arg):
    stack = gke_stack()
    container(stack)["args"] = [arg]
    assert "literal token on its command line" in run_resource_rule(validate_secrets_from_secret_store, stack).messages[0]


def test_non_secret_env_and_token_variables_are_fine():
    stack = gke_stack()
    container(stack)["env"] += [{"name": "TOKENIZERS_PARALLELISM", "value": "false"},
                                {"name": "MAX_TOKENS", "value": "4096"}, {"name": "OPENAI_API_KEY", "value": ""}]
    container(stack)["args"] = ["--hf-token=$(HF_TOKEN)"]
    assert run_resource_rule(validate_secrets_from_secret_store, stack).violations == []


def test_init_containers_and_api_keys_are_checked():
    stack = gke_stack()
    spec = find(stack, "vllm-gpu").props["spec"]["template"]["spec"]
    spec["initContainers"] = [{"name": "fetch", "image": "busybox", "env": [{"name": "API_KEY", "value": "k"}]}]
    assert "container fetch" in run_resource_rule(validate_secrets_from_secret_store, stack).messages[0]


# ---- pinned-charts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("chart", "version", "pinned"), [
    ("dra-driver-nvidia-gpu", "0.4.0", True),
    ("dra-driver-nvidia-gpu", "v0.4.1-rc.1", True),
    ("oci://registry.k8s.io/x/charts/y@sha256:0123abcd", "", True),
    ("dra-driver-nvidia-gpu", "", False),
    ("dra-driver-nvidia-gpu", None, False),
    ("dra-driver-nvidia-gpu", "^0.4.0", False),
    ("dra-driver-nvidia-gpu", "~0.4", False),
    ("dra-driver-nvidia-gpu", "0.4.x", False),
    ("dra-driver-nvidia-gpu", ">=0.4.0", False),
    ("dra-driver-nvidia-gpu", "latest", False),
])
def test_chart_versions(chart, version, pinned):
    props = {"chart": chart, **({"version": version} if version is not None else {})}
    found = run_resource_rule(validate_pinned_charts, [R("kubernetes:helm.sh/v3:Release", "r", props)])
    assert (not found.violations) is pinned, found.messages


def test_helm_v4_chart_is_checked_too():
    found = run_resource_rule(validate_pinned_charts, [R("kubernetes:helm.sh/v4:Chart", "c", {"chart": "x"})])
    assert len(found.violations) == 1


# ---- eks-dra-scale-from-zero -------------------------------------------------------------------------------------


def test_eks_dra_group_at_zero():
    found = run_resource_rule(validate_eks_dra_scale_from_zero, [eks_group("a100", "p4d.24xlarge", dra=True, minimum=0)])
    assert len(found.violations) == 1 and "minSize 0" in found.messages[0]
    assert run_resource_rule(validate_eks_dra_scale_from_zero,
                             [eks_group("t4", "g4dn.xlarge", dra=False, minimum=0)]).violations == []
    assert run_resource_rule(validate_eks_dra_scale_from_zero,
                             [eks_group("a100", "p4d.24xlarge", dra=True, minimum=1)]).violations == []
