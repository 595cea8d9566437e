"""What claims can reach, with hand-built args and a collecting report_violation:
dra-reachable-pools-served, claim-alternative-satisfiable, and claim-shape's allocator checks."""

import pytest

from policies.rules.claims import validate_claim_shape
from policies.rules.reach import validate_alternatives_satisfiable, validate_reachable_pools_served
from tests.policy_fixtures import R, eks_stack, find, gke_gpu_pool, gke_stack, run_stack_rule

RULES = [validate_reachable_pools_served, validate_alternatives_satisfiable]


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
def test_seed_shaped_stacks_pass(stack):
    for rule in RULES:
        assert run_stack_rule(rule, stack()).violations == [], rule.__name__


def subrequests(resources, name="vllm-gpu-template"):
    return find(resources, name).props["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"]


# ---- dra-reachable-pools-served ---------------------------------------------------------------------


def test_gke_tpu_pool_without_its_dra_label_is_caught():
    resources = gke_stack()
    find(resources, "tpu-v6e-pool").props["nodeConfig"]["labels"] = {}
    (message,) = run_stack_rule(validate_reachable_pools_served, resources).messages
    assert message.startswith("Deployment vllm-tpu: claim alternative tpus of ResourceClaimTemplate vllm-tpu can "
                              "land on (the pods' placement admits) pool tpu-v6e, but the TPU DRA kubelet plugin "
                              "does not run there")
    assert "GKE's default TPU device plugin (the pool lacks cloud.google.com/gke-tpu-dra-driver=true)" in message


def test_gke_gpu_pool_named_by_an_alternative_without_dra_labels_is_caught():
    resources = gke_stack()
    pool = find(resources, "a100-40gb-pool").props["nodeConfig"]
    pool["labels"] = {"cloud.google.com/compute-class": "vllm-gpu-ccc"}  # no DRA labels, default plugin on
    (violation,) = run_stack_rule(validate_reachable_pools_served, resources).violations
    assert "claim alternative gpu/a100-40gb of ResourceClaimTemplate vllm-gpu is named after pool a100-40gb" \
        in violation[0]
    assert "GKE's default NVIDIA device plugin" in violation[0]
    assert violation[1].endswith("::a100-40gb-pool")


def test_eks_group_without_its_dra_label_is_caught():
    resources = eks_stack()
    del find(resources, "l4-group").props["labels"]["nvidia.com/gpu.dra"]
    messages = run_stack_rule(validate_reachable_pools_served, resources).messages
    (message,) = [m for m in messages if "pool gpu-fungibility-l4" in m]
    assert "claim alternative gpu/l4" in message and "Deployment vllm-gpu" in message
    assert "the NVIDIA GPU DRA kubelet plugin does not run there" in message
    assert "Helm release nvidia-device-plugin" in message and "takes its devices" in message


def test_a_device_plugin_next_to_the_dra_plugin_on_a_reachable_pool_is_caught():
    resources = gke_stack()
    del find(resources, "a100-80gb-pool").props["nodeConfig"]["labels"]["gke-no-default-nvidia-gpu-device-plugin"]
    (message,) = run_stack_rule(validate_reachable_pools_served, resources).messages
    assert "pool a100-80gb, but GKE's default NVIDIA device plugin" in message
    assert "two plugins would manage the same devices" in message


def test_a_pool_no_claim_reaches_is_not_this_rules_business():
    resources = gke_stack()
    resources.append(gke_gpu_pool("l4-batch", "g2-standard-8", "nvidia-l4", 1, spot=True, minimum=0))
    find(resources, "l4-batch-pool").props["nodeConfig"]["labels"] = {}
    find(resources, "l4-batch-pool").props["nodeConfig"]["taints"] = []
    assert run_stack_rule(validate_reachable_pools_served, resources).violations == []


# ---- claim-alternative-satisfiable ------------------------------------------------------------------


def test_an_alternative_that_selects_a_gpu_its_pool_lacks():
    resources = gke_stack()
    subrequests(resources)[0]["selectors"][0]["cel"]["expression"] = (
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'")
    (violation,) = run_stack_rule(validate_alternatives_satisfiable, resources).violations
    assert violation[0] == (
        "Deployment vllm-gpu: claim alternative gpu/a100-80gb of ResourceClaimTemplate vllm-gpu stands for pool "
        "a100-80gb, but its selectors (device class gpu.nvidia.com, \"device.attributes['gpu.nvidia.com']."
        "productName == 'NVIDIA H100 80GB HBM3'\") match 0 of the 1 devices a node of it publishes "
        "(1 x nvidia-a100-80gb); it needs 1, so that alternative can never be allocated there.")
    assert violation[1].endswith("::vllm-gpu-template")


def test_an_alternative_that_wants_more_devices_than_a_node_has():
    resources = gke_stack()
    subrequests(resources)[1]["count"] = 4
    (message,) = run_stack_rule(validate_alternatives_satisfiable, resources).messages
    assert "gpu/a100-40gb" in message and "match 2 of the 2 devices" in message and "it needs 4" in message


@pytest.mark.parametrize("expression, matches", [
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", True),  # 81920Mi published
    ("device.capacity['gpu.nvidia.com'].memory == quantity('81920Mi')", True),
    ("device.attributes['gpu.nvidia.com'].architecture == 'Hopper'", False),
    ("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('600.0.0'))", False),
    ("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('570.0.0'))", True),
])
def test_selectors_are_evaluated_against_what_the_catalog_says_the_pool_publishes(expression, matches):
    resources = gke_stack()
    subrequests(resources)[0]["selectors"] = [{"cel": {"expression": expression}}]
    violations = run_stack_rule(validate_alternatives_satisfiable, resources).violations
    assert (violations == []) is matches, violations


def test_a_selector_that_fails_at_runtime_on_the_pools_devices():
    resources = gke_stack()
    subrequests(resources)[1]["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].foo == 1"}}]
    (message,) = run_stack_rule(validate_alternatives_satisfiable, resources).messages
    assert "claim alternative gpu/a100-40gb fails on the devices of pool a100-40gb with a CEL runtime error" in message


def test_an_exactly_request_stands_for_the_one_pool_its_pods_can_use():
    resources = gke_stack()
    request = find(resources, "vllm-tpu-template").props["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    request["selectors"] = [{"cel": {"expression": "device.attributes['tpu.google.com'].tpuGen == 'v5p'"}}]
    (message,) = run_stack_rule(validate_alternatives_satisfiable, resources).messages
    assert "claim alternative tpus of ResourceClaimTemplate vllm-tpu stands for pool tpu-v6e" in message
    assert "at least one (allocationMode All)" in message


def test_a_mig_alternative_is_judged_against_the_gpus_slices():
    resources = gke_stack()
    subrequests(resources)[0].update({"deviceClassName": "mig.nvidia.com", "selectors": [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}]})
    assert run_stack_rule(validate_alternatives_satisfiable, resources).violations == []
    subrequests(resources)[0]["selectors"][0]["cel"]["expression"] = (
        "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'")  # an A100 40GB profile, not an 80GB one
    assert run_stack_rule(validate_alternatives_satisfiable, resources).violations


# ---- claim-shape: what the allocator refuses --------------------------------------------------------


@pytest.mark.parametrize("change, problem", [
    ({"allocationMode": "all"}, "allocationMode 'all' is not one of ExactCount, All (case-sensitive)"),
    ({"count": 0}, "count must be 1 or more, got 0"),
    ({"selectors": [{"notCel": {"expression": "true"}}]}, "selector #0 has no cel expression"),
    ({"count": 33}, "it asks for at least 33 devices; one claim holds at most 32"),
])
def test_claims_the_allocator_refuses(change, problem):
    resources = gke_stack()
    subrequests(resources)[0].update(change)
    subrequests(resources)[1].update(change)
    messages = run_stack_rule(validate_claim_shape, resources).messages
    assert any(problem in m for m in messages), messages


def test_constraints_need_a_kind():
    resources = gke_stack()
    devices = find(resources, "vllm-gpu-template").props["spec"]["spec"]["devices"]
    devices["constraints"] = [{"requests": ["gpu"], "matchAttribute": "gpu.nvidia.com/uuid"}]
    assert run_stack_rule(validate_claim_shape, resources).violations == []
    devices["constraints"] = [{"requests": ["gpu"]}]
    (message,) = run_stack_rule(validate_claim_shape, resources).messages
    assert "constraint #0 sets neither matchAttribute nor distinctAttribute" in message


def test_rules_see_only_what_they_are_given():
    assert run_stack_rule(validate_reachable_pools_served, [R("kubernetes:core/v1:Namespace", "ns", {})]).violations == []


# ---- an All alternative after the first, per Kubernetes minor ---------------------------------------------


def two_tpu_pools(version: str) -> list:
    """The GKE stack with a second TPU pool (v5e) as the second alternative of the TPU claim."""
    resources = gke_stack()
    find(resources, "cluster").props["minMasterVersion"] = version
    v6e = find(resources, "tpu-v6e-pool")
    v5e = R(v6e.type, "tpu-v5e-pool", {**v6e.props, "name": "tpu-v5e",
                                        "nodeConfig": {**v6e.props["nodeConfig"], "machineType": "ct5lp-hightpu-1t"}})
    resources.insert(resources.index(v6e) + 1, v5e)
    tpu = {"deviceClassName": "tpu.google.com", "allocationMode": "All"}
    find(resources, "vllm-tpu-template").props["spec"]["spec"]["devices"]["requests"] = [
        {"name": "tpus", "firstAvailable": [{"name": "tpu-v6e", **tpu}, {"name": "tpu-v5e", **tpu}]}]
    deployment = find(resources, "vllm-tpu").props["spec"]["template"]["spec"]
    del deployment["nodeSelector"]["cloud.google.com/gke-nodepool"]
    return resources


@pytest.mark.parametrize(("version", "refused"), [("1.35", True), ("1.36", False)])
def test_an_all_alternative_after_the_first_is_refused_where_the_scheduler_mishandles_it(version, refused):
    messages = run_stack_rule(validate_alternatives_satisfiable, two_tpu_pools(version)).messages
    assert len(messages) == int(refused), messages
    if refused:
        assert messages[0].startswith("Deployment vllm-tpu: claim alternative tpus/tpu-v5e of ResourceClaimTemplate")
        assert "Kubernetes 1.35's scheduler takes its first device" in messages[0]
