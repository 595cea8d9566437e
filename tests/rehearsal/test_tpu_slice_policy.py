"""The TPU DRA plugin's ResourceSlice policy on Kubernetes' own API server (`make test-rehearse`).

The dev stack's plan carries the project's ValidatingAdmissionPolicy for the TPU plugin
(gpu_fungibility.tpu_dra.resource_slice_policy). Applied to the harness's kube-apiserver, it must refuse the
plugin's service account (impersonated, with the node name its token would carry) writing another node's
ResourceSlice through resource.k8s.io/v1, and let it write its own node's. The chart's own policy names only
v1beta1, which 1.35 does not serve: applied the same way, it refuses nothing.
"""

from __future__ import annotations

import copy
import urllib.parse

import pytest
from gpu_fungibility import tpu_dra

from rehearse import scenario

NODE_EXTRA_HEADER = "Impersonate-Extra-" + urllib.parse.quote(tpu_dra.NODE_NAME_EXTRA, safe="")


def _slice(name: str, node: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "tpu.google.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": []}}


def _as_plugin(kubeconfig: str, user: str, node: str):
    import kubernetes

    client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
    client.set_default_header("Impersonate-User", user)
    client.set_default_header(NODE_EXTRA_HEADER, node)
    return kubernetes.dynamic.DynamicClient(client).resources.get(api_version="resource.k8s.io/v1",
                                                                   kind="ResourceSlice")


@pytest.fixture(scope="module")
def policy_objects():
    dev = scenario.load("dev")
    found = [m.obj for m in dev.manifests if m.obj["kind"].startswith("ValidatingAdmissionPolicy")
             and m.obj["metadata"]["name"] == tpu_dra.SLICE_POLICY_NAME]
    assert sorted(o["kind"] for o in found) == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    return found


def _rbac(user: str) -> list[dict]:
    namespace, account = user.split(":")[2:]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "slices"},
            "rules": [{"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"],
                       "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "slices"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                           "kind": "ClusterRole", "name": "slices"},
               "subjects": [{"kind": "ServiceAccount", "namespace": namespace, "name": account}]}
    return [role, binding]


def _user(policy: dict) -> str:
    expression = policy["spec"]["matchConditions"][0]["expression"]
    return expression.split("'")[1]


def _body(exc) -> str:
    body = exc.body
    return body.decode() if isinstance(body, bytes) else str(body)


def _wait_for_policy(api, node: str) -> None:
    """A new policy takes effect once the API server's policy informer has it: try until a refusal comes."""
    import time

    from kubernetes.client.exceptions import ApiException

    for attempt in range(100):
        try:
            api.create(body=_slice(f"probe-{attempt}", f"{node}-other"))
        except ApiException as exc:
            if exc.status in (403, 422) and "may not write" in _body(exc):
                return
            raise
        time.sleep(0.1)
    raise AssertionError("the policy never took effect")


def test_the_plugin_may_write_only_its_own_nodes_slices(cluster, policy_objects):
    from kubernetes.client.exceptions import ApiException

    policy = next(o for o in policy_objects if o["kind"] == "ValidatingAdmissionPolicy")
    user = _user(policy)
    assert user == "system:serviceaccount:dra-driver-google-tpu:dra-driver-google-tpu-service-account"
    assert all(r.ok for r in cluster.apply(_rbac(user) + policy_objects))
    api = _as_plugin(str(cluster.kubeconfig), user, "tpu-node-a")
    _wait_for_policy(api, "tpu-node-a")

    api.create(body=_slice("own", "tpu-node-a"))
    with pytest.raises(ApiException) as refused:
        api.create(body=_slice("other", "tpu-node-b"))
    assert "the TPU DRA kubelet plugin on node tpu-node-a may not write the ResourceSlices of node tpu-node-b" \
        in _body(refused.value)
    assert all(r.ok for r in cluster.apply([_slice("admin", "tpu-node-b")])), "other users are not matched"
    with pytest.raises(ApiException):
        api.delete(name="admin")
    api.delete(name="own")


def test_a_policy_naming_only_v1beta1_refuses_nothing_on_this_minor(cluster, policy_objects):
    """What the chart's own policy does: the same rule, matched on v1beta1 only (not served from 1.35)."""
    policy, binding = (copy.deepcopy(o) for o in sorted(policy_objects, key=lambda o: o["kind"]))
    policy["metadata"]["name"] = binding["metadata"]["name"] = binding["spec"]["policyName"] = "beta-only"
    policy["spec"]["matchConstraints"]["resourceRules"][0]["apiVersions"] = ["v1beta1"]
    user = _user(policy)
    assert all(r.ok for r in cluster.apply(_rbac(user) + [policy, binding]))
    served = [g for g in cluster.list("apiservices")["apiservices"] if g["metadata"]["name"].endswith(
        ".resource.k8s.io")]
    if any(g["metadata"]["name"] == "v1beta1.resource.k8s.io" for g in served):
        pytest.skip("this minor serves resource.k8s.io/v1beta1")
    import time

    time.sleep(2)  # longer than the policy informer needs (the test above waits well under a second)
    api = _as_plugin(str(cluster.kubeconfig), user, "tpu-node-a")
    api.create(body=_slice("other", "tpu-node-b"))  # let through
