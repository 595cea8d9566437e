"""serving-requests-fit-nodes with hand-built args: the node room is the library's capacity-based model."""

from gpu_fungibility import sizing

from policies.rules.requests_fit import validate_serving_requests_fit_nodes
from tests.policy_fixtures import eks_stack, find, gke_stack, run_stack_rule


def with_requests(stack, deployment: str, **requests: str):
    container = find(stack, deployment).props["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"] = dict(requests)
    return stack


def test_seed_shaped_stacks_without_requests_pass():
    assert run_stack_rule(validate_serving_requests_fit_nodes, gke_stack()).violations == []
    assert run_stack_rule(validate_serving_requests_fit_nodes, eks_stack()).violations == []


def test_a_request_that_fills_the_estimated_room_passes_and_one_mebibyte_more_does_not():
    room = sizing.node_room("gke", "a2-ultragpu-1g", "gpu").free  # the smaller of the class's two machines
    fits = with_requests(gke_stack(), "vllm-gpu", memory=f"{room[1]}Mi")
    assert run_stack_rule(validate_serving_requests_fit_nodes, fits).violations == []
    over = with_requests(gke_stack(), "vllm-gpu", memory=f"{room[1] + 1}Mi")
    violations = run_stack_rule(validate_serving_requests_fit_nodes, over).violations
    assert {urn for _, urn in violations} == {find(over, "vllm-gpu").urn}
    assert len(violations) == 2, "both pools of the compute class have a 170 GiB machine"
    message = violations[0][0]
    assert message.startswith(f"Deployment vllm-gpu requests {room[1] + 1}Mi memory (a node offers 155.5 GiB: "
                              "156.9 GiB allocatable of 167.0 GiB capacity, less 1.3 GiB for system pods and "
                              "DaemonSets) per pod, more than one a2-")
    assert "the autoscaler never adds a node for it" in message


def test_the_nominal_memory_is_not_the_nodes():
    """158Gi is below 170 GiB less GKE's tiers, but above what a node reports."""
    stack = with_requests(gke_stack(), "vllm-gpu", memory="158Gi")
    assert run_stack_rule(validate_serving_requests_fit_nodes, stack).violations


def test_cpu_is_checked_too_and_eks_uses_its_own_model():
    stack = with_requests(eks_stack(), "vllm-gpu", cpu="3500m")  # g6e.xlarge: 3320m free of 3920m allocatable
    (message, *_) = run_stack_rule(validate_serving_requests_fit_nodes, stack).messages
    assert "requests 3500m CPU (a node offers 3320m)" in message


def test_daemon_sets_and_pods_without_claims_are_not_serving_pods():
    stack = with_requests(gke_stack(), "vllm-gpu", memory="1000Gi")
    del find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["resourceClaims"]
    assert run_stack_rule(validate_serving_requests_fit_nodes, stack).violations == []
