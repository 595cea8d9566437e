"""The harness on the real control plane: what Kubernetes' own scheduler and controllers write.

A GPU node publishes one small device; a claim template asks for a big device first and a small one second
(`firstAvailable`): the real allocator must pick the second alternative. A plugin DaemonSet selects the GPU pool
only. An invalid CEL selector is refused by the API server with its own message.
"""

from __future__ import annotations

import copy
import time

import pytest

DRIVER = "gpu.example.com"
NS = "rehearse-test"


def node(name: str, pool: str, *, taint: bool = False) -> dict:
    spec = {"taints": [{"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}]} if taint else {}
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "example.com/pool": pool}},
        "spec": spec,
        "status": {"capacity": resources, "allocatable": resources,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "message": "kubelet is posting ready status"}]},
    }


def device_class(name: str = DRIVER, expression: str = f'device.driver == "{DRIVER}"') -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def resource_slice(node_name: str, model: str = "small") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {"driver": DRIVER, "nodeName": node_name,
                 "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {"model": {"string": model}},
                              "capacity": {"memory": {"value": "40Gi"}}}]},
    }


CLAIM_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu", "namespace": NS},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": DRIVER,
         "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "big"'}}]},
        {"name": "small", "deviceClassName": DRIVER},
    ]}]}}},
}

TOLERATION = {"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": NS},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "serve"}},
             "template": {"metadata": {"labels": {"app": "serve"}},
                          "spec": {"tolerations": [TOLERATION],
                                   "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                                   "containers": [{"name": "server", "image": "example.invalid/server:1",
                                                   "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}]}}},
}

DAEMONSET = {
    "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "plugin", "namespace": NS},
    "spec": {"selector": {"matchLabels": {"app": "plugin"}},
             "template": {"metadata": {"labels": {"app": "plugin"}},
                          "spec": {"nodeSelector": {"example.com/pool": "gpu"}, "tolerations": [TOLERATION],
                                   "containers": [{"name": "plugin", "image": "example.invalid/plugin:1"}]}}},
}


def scenario() -> list[dict]:
    return [node("gpu-1", "gpu", taint=True), node("cpu-1", "cpu"), device_class(), resource_slice("gpu-1"),
            copy.deepcopy(CLAIM_TEMPLATE), copy.deepcopy(DEPLOYMENT), copy.deepcopy(DAEMONSET)]


def owned_by(pod: dict, kind: str) -> bool:
    return any(ref["kind"] == kind for ref in pod["metadata"].get("ownerReferences", []))


def test_real_scheduler_and_controllers(cluster):
    results = cluster.apply(scenario())
    assert all(r.ok for r in results), [r for r in results if not r.ok]
    assert [r.ref for r in results][:2] == ["Node/gpu-1", "Node/cpu-1"]
    cluster.settle(timeout_s=60)
    state = cluster.list("pods", "resourceclaims", "nodes", "daemonsets", "replicasets")

    nodes = {n["metadata"]["name"]: n for n in state["nodes"]}
    assert nodes["gpu-1"]["status"]["allocatable"]["cpu"] == "8", "the Node's status went through its subresource"

    serving = [p for p in state["pods"] if owned_by(p, "ReplicaSet")]
    assert len(serving) == 1 and serving[0]["spec"]["nodeName"] == "gpu-1"
    assert serving[0]["kind"] == "Pod" and serving[0]["apiVersion"] == "v1"

    plugin = [p for p in state["pods"] if owned_by(p, "DaemonSet")]
    assert [p["spec"]["nodeName"] for p in plugin] == ["gpu-1"], "the daemonset controller's own node choice"

    claims = state["resourceclaims"]
    assert len(claims) == 1
    results = claims[0]["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["driver"], r["pool"], r["device"]) for r in results] == [
        ("gpu/small", DRIVER, "gpu-1", "gpu-0")], "firstAvailable: the big alternative has no device, small does"
    assert claims[0]["status"]["reservedFor"][0]["name"] == serving[0]["metadata"]["name"]

    # the kubelet stand-in started the bound pods, so the controllers count them ready
    assert {p["status"]["phase"] for p in state["pods"]} == {"Running"}
    (daemonset,) = state["daemonsets"]
    assert daemonset["status"]["numberReady"] == daemonset["status"]["desiredNumberScheduled"] == 1


def test_refused_object_quotes_the_api_server(cluster):
    results = cluster.apply([device_class("broken.example.com", "device.driver == "),
                             device_class("fine.example.com", 'device.driver == "fine.example.com"')])
    refused, accepted = results
    assert refused.ref == "DeviceClass/broken.example.com" and not refused.ok
    assert "broken.example.com" in refused.error and "spec.selectors[0].cel.expression" in refused.error
    assert accepted.ok, "one refusal does not stop the rest"
    assert [c["metadata"]["name"] for c in cluster.list("deviceclasses")["deviceclasses"]] == ["fine.example.com"]


def test_unschedulable_pod_settles_with_the_schedulers_reason(cluster):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "too-big", "namespace": NS},
           "spec": {"containers": [{"name": "c", "image": "example.invalid/x:1",
                                    "resources": {"requests": {"cpu": "64"}}}]}}
    assert all(r.ok for r in cluster.apply([node("cpu-1", "cpu"), pod]))
    cluster.settle(timeout_s=60)
    (listed,) = cluster.list("pods")["pods"]
    assert "nodeName" not in listed["spec"]
    condition = next(c for c in listed["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["reason"] == "Unschedulable" and "Insufficient cpu" in condition["message"]
    assert listed["status"]["phase"] == "Pending"
    events = [e for e in cluster.list("events")["events"] if e["involvedObject"].get("name") == "too-big"]
    assert any(e["reason"] == "FailedScheduling" and "Insufficient cpu" in e.get("message", "") for e in events)


def test_reset_empties_the_cluster(cluster):
    assert all(r.ok for r in cluster.apply(scenario()))
    cluster.settle(timeout_s=60)
    cluster.reset()
    state = cluster.list("pods", "resourceclaims", "resourceclaimtemplates", "nodes", "resourceslices",
                         "deviceclasses", "deployments", "replicasets", "daemonsets", "namespaces")
    assert {kind: items for kind, items in state.items() if kind != "namespaces" and items} == {}
    assert sorted(n["metadata"]["name"] for n in state["namespaces"]) == [
        "default", "kube-node-lease", "kube-public", "kube-system"]


def test_spot_reclaim_recreates_the_pod_elsewhere(cluster):
    assert all(r.ok for r in cluster.apply(scenario()))
    cluster.settle(timeout_s=60)
    (before,) = [p for p in cluster.list("pods")["pods"] if owned_by(p, "ReplicaSet")]
    assert before["spec"]["nodeName"] == "gpu-1"
    assert all(r.ok for r in cluster.apply([node("gpu-2", "gpu", taint=True), resource_slice("gpu-2")]))
    cluster.settle(timeout_s=60)

    cluster.delete([{"apiVersion": "v1", "kind": "Node", "name": "gpu-1"}], with_pods_on_nodes=True)
    cluster.settle(timeout_s=60)
    state = cluster.list("pods", "resourceclaims", "resourceslices")
    (after,) = [p for p in state["pods"] if owned_by(p, "ReplicaSet")]
    assert after["metadata"]["name"] != before["metadata"]["name"]
    assert after["spec"]["nodeName"] == "gpu-2"
    assert [s["spec"]["nodeName"] for s in state["resourceslices"]] == ["gpu-2"]
    allocated = [c for c in state["resourceclaims"] if c.get("status", {}).get("allocation")]
    assert [c["status"]["allocation"]["devices"]["results"][0]["pool"] for c in allocated] == ["gpu-2"]
    assert sorted(p["spec"]["nodeName"] for p in state["pods"] if owned_by(p, "DaemonSet")) == ["gpu-2"]


def test_kubeconfig_reaches_the_api_server(harness):
    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.config.new_client_from_config(config_file=str(harness.kubeconfig))
    try:
        version = kubernetes.client.VersionApi(api).get_code()
        assert version.git_version == harness.version
        kubernetes.client.CoreV1Api(api).list_node()
    finally:
        api.close()


def test_custom_resource_definition_then_its_object(cluster):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    results = cluster.apply([crd, widget])
    assert [r.ok for r in results] == [True, True], results
    assert [w["metadata"]["name"] for w in cluster.list("widgets")["widgets"]] == ["w1"]
    cluster.reset()
    assert "widgets.example.com" not in [c["metadata"]["name"] for c in
                                         cluster.list("customresourcedefinitions")["customresourcedefinitions"]]


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def _patch(version: str) -> tuple[int, int, int]:
    major, minor, patch = (version.lstrip("v").split("-")[0].split(".") + ["0"])[:3]
    return int(major), int(minor), int(patch)


#: The newest patch of each minor read to still lack kubernetes/kubernetes#138408 (its resourceclaim controller
#: source, at the module versions the harness pins). The fix is in v1.37.0; cherry-picks to 1.35 (#142023) and
#: 1.34 (#142025) are open, so a later patch of those minors may carry it: there either outcome is accepted.
LACKS_THE_FLAPPING_FIX = {(1, 34): 4, (1, 35): 4, (1, 36): 3}


def _flapping_expected(version: str) -> bool | None:
    """True: the pinned patch lacks the fix; False: fixed (1.37 on); None: a later patch, not read."""
    major, minor, patch = _patch(version)
    if (major, minor) >= (1, 37):
        return False
    newest_unfixed = LACKS_THE_FLAPPING_FIX.get((major, minor))
    return True if newest_unfixed is not None and patch <= newest_unfixed else None


def test_a_pod_with_two_claim_templates_flaps_when_one_claim_is_recreated(cluster):
    """kubernetes/kubernetes#138407 on the real resourceclaim controller: once one of a pending pod's two
    generated claims is deleted, the controller re-creates it and applies only that entry to the pod's
    status.resourceClaimStatuses; server-side apply drops the other, the next sync restores that one and drops the
    first, and so on, for ever; kube-scheduler refuses the pod whenever it reads a partial list. settle must still
    return, naming the pod (fixed by #138408 in 1.37: there the list stays whole and nothing flaps)."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "none", "namespace": NS},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {
                    "deviceClassName": DRIVER,
                    "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "absent"'}}]}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two-claims", "namespace": NS},
           "spec": {"tolerations": [TOLERATION],
                    "containers": [{"name": "c", "image": "example.invalid/x:1"}],
                    "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "none"},
                                       {"name": "b", "resourceClaimTemplateName": "none"}]}}
    objects = [node("gpu-1", "gpu", taint=True), device_class(), resource_slice("gpu-1"), template, pod]
    assert all(r.ok for r in cluster.apply(objects))
    cluster.flapping.clear()
    cluster.settle(timeout_s=60)
    (listed,) = cluster.list("pods")["pods"]
    assert "nodeName" not in listed["spec"]
    if sorted(s["name"] for s in listed["status"]["resourceClaimStatuses"]) == ["a", "b"]:
        # the usual start: both claims listed; deleting one sets the loop off
        claim = next(s["resourceClaimName"] for s in listed["status"]["resourceClaimStatuses"] if s["name"] == "b")
        cluster.flapping.clear()
        cluster.delete([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "namespace": NS,
                         "name": claim}])
        cluster.settle(timeout_s=60, quiet_ms=1200)
        (listed,) = cluster.list("pods")["pods"]
        assert "nodeName" not in listed["spec"]
    else:  # the controller's first syncs already fell into the loop (seen once in CI): the same bug, on its own
        assert _flapping_expected(cluster.version) is not False, listed["status"]["resourceClaimStatuses"]
    expected = _flapping_expected(cluster.version)
    if expected is None:  # a patch that may carry a cherry-pick: whichever happens, settle names what flaps
        expected = bool(cluster.flapping)
    if expected:
        assert cluster.flapping == {f"{NS}/two-claims"}
        time.sleep(0.5)
        (again,) = cluster.list("pods")["pods"]
        assert again["metadata"]["resourceVersion"] != listed["metadata"]["resourceVersion"], "still rewritten"
        writer = max(again["metadata"]["managedFields"], key=lambda m: m["time"])
        assert writer["manager"] == "ResourceClaimController" and writer["subresource"] == "status"
    else:
        assert not cluster.flapping
        assert sorted(s["name"] for s in listed["status"]["resourceClaimStatuses"]) == ["a", "b"]
