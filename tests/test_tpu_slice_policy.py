"""The project's ResourceSlice policy for the TPU DRA plugin (its effect on a real API server:
tests/rehearsal/test_tpu_slice_policy.py)."""

import pytest
from gpu_fungibility import pins, tpu_dra


@pytest.mark.parametrize(("release", "values", "account"), [
    ("dra-driver-google-tpu", {}, "dra-driver-google-tpu-service-account"),
    ("tpu", {}, "tpu-dra-driver-google-tpu-service-account"),
    ("tpu", {"nameOverride": "x"}, "tpu-x-service-account"),
    ("tpu", {"fullnameOverride": "mine"}, "mine-service-account"),
    ("tpu", {"serviceAccount": {"name": "sa"}}, "sa"),
    ("tpu", {"serviceAccount": {"create": False}}, "default"),
    ("r" * 70, {}, "r" * 63 + "-service-account"),
])
def test_the_service_account_is_named_as_the_chart_names_it(release, values, account):
    assert tpu_dra.service_account_name(release, values) == account


def test_the_policy_matches_v1_writes_of_the_plugin_and_compares_nodes():
    policy, binding = tpu_dra.resource_slice_policy("ns", "sa")
    spec = policy["spec"]
    assert spec["matchConstraints"]["resourceRules"] == [{
        "apiGroups": ["resource.k8s.io"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE", "DELETE"],
        "resources": ["resourceslices"]}]
    assert spec["matchConditions"][0]["expression"] == "request.userInfo.username == 'system:serviceaccount:ns:sa'"
    assert spec["failurePolicy"] == "Fail"
    assert tpu_dra.NODE_NAME_EXTRA in spec["variables"][0]["expression"]
    assert binding["spec"] == {"policyName": tpu_dra.SLICE_POLICY_NAME, "validationActions": ["Deny"]}


def test_the_dev_plan_carries_the_policy_for_the_releases_service_account():
    from offline_plan import manifests
    from offline_plan.run import run_stack_file

    run = run_stack_file("dev")
    objects = {(m.obj["kind"], m.obj["metadata"]["name"]): m.obj for m in manifests.manifests(run)}
    policy = objects[("ValidatingAdmissionPolicy", tpu_dra.SLICE_POLICY_NAME)]
    assert (("ValidatingAdmissionPolicyBinding", tpu_dra.SLICE_POLICY_NAME)) in objects
    expected, _ = tpu_dra.resource_slice_policy(pins.TPU_DRA_NAMESPACE, tpu_dra.service_account_name(
        tpu_dra.RELEASE_NAME, {}))
    assert policy["spec"] == expected["spec"]


def test_stacks_without_tpu_pools_have_no_such_policy():
    from offline_plan import manifests
    from offline_plan.run import run_stack_file

    for stack in ("prod", "eks-dev", "aks-dev"):
        kinds = {m.obj["kind"] for m in manifests.manifests(run_stack_file(stack))}
        assert "ValidatingAdmissionPolicy" not in kinds, stack
