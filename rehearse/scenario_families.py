"""The families of the differential's scenarios: each adds one kind of case to a base scenario.

A family is drawn per scenario (:data:`rehearse.scenarios.FAMILIES`) with its own random stream, so the base
scenario stays what the base generator makes and a family only adds to it:

- ``shared-claim``: pods that name a ResourceClaim (one claim shared by every pod that names it, sometimes by
  pods of two groups) instead of a ResourceClaimTemplate;
- ``zones``: every node carries ``topology.kubernetes.io/zone`` (as every real node does) and more groups are
  Deployments, so PodTopologySpread's zone constraint scores;
- ``preferred-affinity``: preferred node-affinity terms of weights 1 to 100;
- ``pod-resources``: containers with limits only (requests default from them), init containers (the largest
  counts), sidecars (``restartPolicy: Always``, added up), exact byte quantities, containers without requests;
- ``cel``: network-attached devices (int, string, bool and version attributes) chosen by cross-typed CEL:
  heterogeneous ``==``/``!=``, int against double and uint, ``sets.*``, ``sign(q)``, ``string(version)``;
- ``admission``: what the API server refuses (``q.sign()``, an invalid regex literal, a heterogeneous list
  literal, a constraint naming an unknown request, nine subrequests) or accepts (``cpu: "0"``, ``count: 0``);
- ``admin-access``: requests with ``adminAccess: true`` beside ordinary ones on the same devices;
- ``network-slices``: ResourceSlices without ``nodeName`` (``allNodes`` or a ``nodeSelector``), whose devices
  every selected node shares.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from gpu_fungibility import device_selectors

from rehearse.scenarios import (
    NAMESPACE,
    NIC,
    NVIDIA,
    PAUSE_IMAGE,
    POOL_LABEL,
    SCENARIO_LABEL,
    ZONE_LABEL,
    Group,
    Scenario,
    device_class,
)

ZONES = ("zone-a", "zone-b", "zone-c")
NIC_MODELS = ("cx6", "cx7", "e810")

#: Cross-typed selectors over a NIC device, each valid in Kubernetes' DRA CEL environment (the API server accepts
#: them); what cel-go makes of each is the point (heterogeneous equality is false, int/double/uint order across
#: types, ``string(version)`` has no overload: a runtime error).
NIC_SELECTORS = (
    f"device.attributes['{NIC}'].index < 1.5",
    f"device.attributes['{NIC}'].index >= 2u",
    f"device.attributes['{NIC}'].index == 1.0",
    f"device.attributes['{NIC}'].index != 'one'",
    f"device.attributes['{NIC}'].model == 100",
    f"device.attributes['{NIC}'].model != 100",
    f"device.attributes['{NIC}'].sriov == 1",
    f"device.attributes['{NIC}'].sriov != 1 && device.attributes['{NIC}'].sriov",
    f"device.attributes['{NIC}'].firmware == '2.1.0'",
    f"device.attributes['{NIC}'].firmware.isGreaterThan(semver('2.0.0'))",
    f"string(device.attributes['{NIC}'].firmware) == '2.1.0'",
    f"sets.contains(['cx6', 'cx7'], [device.attributes['{NIC}'].model])",
    f"sets.intersects([device.attributes['{NIC}'].model], ['e810', 'x'])",
    f"sets.equivalent([device.attributes['{NIC}'].model], ['cx7'])",
    f"sign(device.capacity['{NIC}'].bandwidth) == 1",
    f"device.attributes['{NIC}'].index in [0, 2, 3]",
    f"device.attributes['{NIC}'].speed > 100.0",
    f"device.attributes['{NIC}'].speed <= 200u",
    f"device.capacity['{NIC}'].bandwidth.compareTo(quantity('100G')) >= 0",
    f"device.attributes['{NIC}'].?model.orValue('none') == 'cx7'",
    f"device.attributes['{NIC}'].?vendor.orValue('none') == 'none'",
)
#: Cross-typed selectors over a whole GPU (every one valid; most compare values of two types).
GPU_SELECTORS = (
    f"device.attributes['{NVIDIA}'].productName != 0",
    f"device.attributes['{NVIDIA}'].productName == 0",
    f"device.attributes['{NVIDIA}'].driverVersion != '580.126.20'",
    f"device.attributes['{NVIDIA}'].cudaComputeCapability.major() >= 8.0",
    f"device.capacity['{NVIDIA}'].memory.asApproximateFloat() > 20000000000",
)
#: Claims the API server refuses (the reason is in its own words in the differential's apply errors).
REFUSED_SELECTORS = (
    f"device.capacity['{NVIDIA}'].memory.sign() == 1",
    f"device.attributes['{NVIDIA}'].productName.matches('[')",
    f"device.attributes['{NVIDIA}'].productName in ['NVIDIA L4', 1]",
)


def widen(sc: Scenario, family: str, rng: random.Random) -> None:
    sc.family = family
    {"shared-claim": _shared_claim, "zones": _zones, "preferred-affinity": _preferred_affinity,
     "pod-resources": _pod_resources, "cel": _cel, "admission": _admission, "admin-access": _admin_access,
     "network-slices": _network_slices, "partitionable": _partitionable, "device-taints": _device_taints}[family](
        sc, rng)


def _pod(sc: Scenario, rng: random.Random) -> dict[str, Any]:
    return {"nodeSelector": {SCENARIO_LABEL: sc.name}, "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "main", "image": PAUSE_IMAGE, "resources": {"requests": {
                "cpu": rng.choice(("100m", "250m", "1")), "memory": rng.choice(("64Mi", "256Mi", "1Gi"))}}}]}


def _template(name: str, devices: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE}, "spec": {"spec": {"devices": devices}}}


def _new_group(sc: Scenario, rng: random.Random, requests: list[dict[str, Any]], *, kind: str = "Pod",
               replicas: int | None = None) -> Group:
    name = f"{sc.name}-g{len(sc.groups)}"
    template = _template(f"{name}-claim0", {"requests": requests})
    pod = _pod(sc, rng)
    pod["resourceClaims"] = [{"name": "c0", "resourceClaimTemplateName": template["metadata"]["name"]}]
    group = Group(name, kind, replicas or rng.choice((1, 2, 3)), pod, [template])
    sc.groups.append(group)
    return group


def _gpu_pool(sc: Scenario):
    return next((p for p in sc.pools if p.kind == "gpu"), None)


# ---- the families ----


def _shared_claim(sc: Scenario, rng: random.Random) -> None:
    owners = [g for g in sc.groups if g.templates]
    if not owners:
        gpu = _gpu_pool(sc)
        body = {"deviceClassName": device_selectors.GPU_DEVICE_CLASS if gpu or not sc.pools
                else device_selectors.TPU_DEVICE_CLASS, "count": 1}
        owners = [_new_group(sc, rng, [{"name": "r0", "exactly": body}])]
    group = rng.choice(owners)
    template = group.templates.pop(0)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": f"{group.name}-shared", "namespace": NAMESPACE},
             "spec": copy.deepcopy(template["spec"]["spec"])}
    sc.claims.append(claim)
    refs = group.pod["resourceClaims"]
    entry = next(r for r in refs if r.get("resourceClaimTemplateName") == template["metadata"]["name"])
    refs[refs.index(entry)] = {"name": entry["name"], "resourceClaimName": claim["metadata"]["name"]}
    others = [g for g in sc.groups if g is not group]
    if others and rng.random() < 0.5:  # pods of a second group name the same claim
        other = rng.choice(others)
        other.pod.setdefault("resourceClaims", []).append({"name": "shared", "resourceClaimName":
                                                           claim["metadata"]["name"]})
        other.pod.setdefault("tolerations", []).append({"operator": "Exists"})


def _zones(sc: Scenario, rng: random.Random) -> None:
    for pool in sc.pools:
        pool.labels[ZONE_LABEL] = rng.choice(ZONES)
        pool.labels["topology.kubernetes.io/region"] = "region-1"
    for group in sc.groups:
        if rng.random() < 0.6:
            group.kind, group.replicas = "Deployment", rng.choice((2, 3, 4))


def _preferred_affinity(sc: Scenario, rng: random.Random) -> None:
    for group in sc.groups:
        if rng.random() < 0.3 and group is not sc.groups[0]:
            continue
        terms = []
        for _ in range(rng.choice((1, 1, 2))):
            if rng.random() < 0.7:
                expression = {"key": POOL_LABEL, "operator": "In", "values": [rng.choice(sc.pools).name]}
            else:
                expression = {"key": "spot", "operator": rng.choice(("In", "DoesNotExist"))}
                if expression["operator"] == "In":
                    expression["values"] = ["true"]
            terms.append({"weight": rng.choice((1, 5, 50, 100)), "preference": {"matchExpressions": [expression]}})
        node_affinity = group.pod.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = terms


def _pod_resources(sc: Scenario, rng: random.Random) -> None:
    small = min(sc.pools, key=lambda p: p.memory_gi)
    for group in sc.groups:
        if rng.random() < 0.25:
            continue
        main = group.pod["containers"][0]
        requests = dict(main["resources"]["requests"])
        mode = rng.choice(("limits", "partial", "init", "sidecar", "sidecar+init", "bytes", "none", "two"))
        if mode == "limits":
            main["resources"] = {"limits": requests}
        elif mode == "partial":
            main["resources"] = {"requests": {"cpu": requests["cpu"]}, "limits": {"memory": requests["memory"]}}
        elif mode in ("init", "sidecar", "sidecar+init"):
            side = {"name": "side", "image": PAUSE_IMAGE, "restartPolicy": "Always", "resources": {"requests": {
                "cpu": rng.choice(("500m", "1", "2")), "memory": rng.choice(("512Mi", "2Gi"))}}}
            init = {"name": "init", "image": PAUSE_IMAGE, "resources": {"requests": {
                "cpu": rng.choice(("2", "4", "8", "20")), "memory": rng.choice(("2Gi", "8Gi", "40Gi"))}}}
            group.pod["initContainers"] = {"init": [init], "sidecar": [side], "sidecar+init": [side, init]}[mode]
        elif mode == "bytes":
            half = small.memory_gi * 2 ** 30 // 2
            main["resources"] = {"requests": {"cpu": "100m", "memory": str(half + rng.choice((-1, 0, 1)))}}
            group.replicas = max(group.replicas, 2)
        elif mode == "none":
            main["resources"] = {}
        else:
            group.pod["containers"].append({"name": "second", "image": PAUSE_IMAGE, "resources": {
                "limits": {"cpu": rng.choice(("1", "3")), "memory": rng.choice(("1Gi", "6Gi"))}}})


def nic_devices(prefix: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    return [{"name": f"{prefix}-{i}", "attributes": {
        "index": {"int": i}, "model": {"string": rng.choice(NIC_MODELS)},
        "speed": {"int": rng.choice((100, 200, 400))}, "sriov": {"bool": rng.random() < 0.5},
        "firmware": {"version": rng.choice(("1.9.0", "2.1.0", "2.4.1"))}},
        "capacity": {"bandwidth": {"value": rng.choice(("100G", "200G", "400G"))}}} for i in range(count)]


def nic_driver(scenario: str) -> str:
    """The scenario's own NIC driver: slices without a node are seen by every node, so each scenario sharing an
    API server gets its own driver (its classes select it, and no other scenario's pods can take its devices)."""
    return f"{scenario}.{NIC}"


def nic_selector(expression: str, scenario: str) -> str:
    """One of :data:`NIC_SELECTORS` for the scenario's own driver."""
    return expression.replace(NIC, nic_driver(scenario))


def _nic_slice(sc: Scenario, rng: random.Random, selector: dict[str, Any] | None) -> None:
    n = len(sc.shared_slices)
    pool = f"{sc.name}-nic{n}"
    spec: dict[str, Any] = {"driver": nic_driver(sc.name), "devices": nic_devices(f"nic{n}", rng.choice((2, 3, 4)), rng),
                            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1}}
    if selector is None:
        spec["allNodes"] = True
    else:
        spec["nodeSelector"] = selector
    sc.shared_slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": pool}, "spec": spec})


def _nic_class(sc: Scenario) -> str:
    name = f"{sc.name}-nic"
    if not any(c["metadata"]["name"] == name for c in sc.device_classes):
        sc.device_classes.append(device_class(name, [device_selectors.driver_is(nic_driver(sc.name))]))
    return name


def _cel(sc: Scenario, rng: random.Random) -> None:
    _nic_slice(sc, rng, None)
    nic = _nic_class(sc)
    selectors = [nic_selector(e, sc.name) for e in rng.sample(NIC_SELECTORS, rng.choice((1, 1, 2)))]
    requests = [{"name": "nic", "exactly": {"deviceClassName": nic, "count": rng.choice((1, 1, 2)),
                                            "selectors": [{"cel": {"expression": e}} for e in selectors]}}]
    if _gpu_pool(sc) and rng.random() < 0.4:
        requests.append({"name": "gpu", "exactly": {
            "deviceClassName": device_selectors.GPU_DEVICE_CLASS, "count": 1,
            "selectors": [{"cel": {"expression": rng.choice(GPU_SELECTORS)}}]}})
    _new_group(sc, rng, requests)


def _network_slices(sc: Scenario, rng: random.Random) -> None:
    _nic_slice(sc, rng, None)
    if rng.random() < 0.6:
        pool = rng.choice(sc.pools)
        _nic_slice(sc, rng, {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": POOL_LABEL, "operator": "In", "values": [pool.name]}]}]})
    nic = _nic_class(sc)
    requests: list[dict[str, Any]] = [{"name": "nic", "exactly": {"deviceClassName": nic,
                                                                  "count": rng.choice((1, 1, 2, 3))}}]
    if rng.random() < 0.3:
        requests[0]["exactly"]["selectors"] = [{"cel": {"expression": nic_selector(
            f"device.attributes['{NIC}'].model == 'cx7'", sc.name)}}]
    if _gpu_pool(sc) and rng.random() < 0.4:
        requests.append({"name": "gpu", "exactly": {"deviceClassName": device_selectors.GPU_DEVICE_CLASS,
                                                    "count": 1}})
    _new_group(sc, rng, requests, replicas=rng.choice((1, 2, 3, 4)), kind=rng.choice(("Pod", "Deployment")))


def _admin_access(sc: Scenario, rng: random.Random) -> None:
    gpu = _gpu_pool(sc)
    body: dict[str, Any] = ({"deviceClassName": device_selectors.GPU_DEVICE_CLASS} if gpu or not sc.pools else
                            {"deviceClassName": device_selectors.TPU_DEVICE_CLASS if any(p.kind == "tpu" for p in
                                                                                         sc.pools)
                             else device_selectors.MIG_DEVICE_CLASS})
    if rng.random() < 0.2:
        body["allocationMode"] = "All"
    else:
        body["count"] = rng.choice((1, 1, 2))
    admin = {**body, "adminAccess": True}
    ordinary = {k: v for k, v in body.items() if k != "adminAccess"}
    first, second = (admin, ordinary) if rng.random() < 0.5 else (ordinary, admin)
    _new_group(sc, rng, [{"name": "r0", "exactly": first}], replicas=rng.choice((1, 2, 2, 3)))
    _new_group(sc, rng, [{"name": "r0", "exactly": second}], replicas=rng.choice((1, 2)))


def _refused(sc: Scenario, group: Group) -> None:
    sc.meant_refused += [f"ResourceClaimTemplate/{NAMESPACE}/{t['metadata']['name']}" for t in group.templates]


def _admission(sc: Scenario, rng: random.Random) -> None:
    case = rng.choice(("sign-method", "regex", "hetero-list", "unknown-request", "nine-subrequests", "cpu-zero",
                       "count-zero", "valid-regex", "eight-subrequests"))
    gpu_class = device_selectors.GPU_DEVICE_CLASS
    if case in ("sign-method", "regex", "hetero-list"):
        expression = REFUSED_SELECTORS[("sign-method", "regex", "hetero-list").index(case)]
        requests = [{"name": "r0", "exactly": {"deviceClassName": gpu_class, "count": 1,
                                               "selectors": [{"cel": {"expression": expression}}]}}]
        _refused(sc, _new_group(sc, rng, requests))
    elif case == "valid-regex":
        expression = f"device.attributes['{NVIDIA}'].productName.matches('^NVIDIA (L4|A100|H100)')"
        _new_group(sc, rng, [{"name": "r0", "exactly": {"deviceClassName": gpu_class, "count": 1,
                                                        "selectors": [{"cel": {"expression": expression}}]}}])
    elif case == "unknown-request":
        group = _new_group(sc, rng, [{"name": "r0", "exactly": {"deviceClassName": gpu_class, "count": 1}}])
        group.templates[0]["spec"]["spec"]["devices"]["constraints"] = [
            {"matchAttribute": f"{NVIDIA}/productName", "requests": ["r0", "r9"]}]
        _refused(sc, group)
    elif case in ("nine-subrequests", "eight-subrequests"):
        n = 9 if case == "nine-subrequests" else 8
        subs = [{"name": f"s{k}", "deviceClassName": gpu_class, "count": 1 + (n - 1 - k) // 2} for k in range(n)]
        group = _new_group(sc, rng, [{"name": "r0", "firstAvailable": subs}])
        if n > 8:
            _refused(sc, group)
    elif case == "cpu-zero":
        group = _new_group(sc, rng, [{"name": "r0", "exactly": {"deviceClassName": gpu_class, "count": 1}}])
        group.pod["containers"][0]["resources"]["requests"]["cpu"] = "0"
    else:  # count-zero: defaulted to 1
        _new_group(sc, rng, [{"name": "r0", "exactly": {"deviceClassName": gpu_class, "count": 0}}])


# ---- DRA features on by default from 1.36 (simulator/dra_features.py); on 1.34 and 1.35 the API server drops them ----


def _own_slice(sc: Scenario, rng: random.Random, suffix: str, count: int, **spec: Any) -> dict[str, Any]:
    """A ResourceSlice of the scenario's own driver (:func:`nic_driver`) offered to one pool by a nodeSelector."""
    pool = rng.choice(sc.pools)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{sc.name}-{suffix}"},
            "spec": {"driver": nic_driver(sc.name), "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": POOL_LABEL, "operator": "In", "values": [pool.name]}]}]},
                     "pool": {"name": f"{sc.name}-{suffix.split('-')[0]}", "generation": 1,
                              "resourceSliceCount": count}, **spec}}


def _partitionable(sc: Scenario, rng: random.Random) -> None:
    """Devices that share counters (DRAPartitionableDevices): one or two counter sets in a slice of their own, and
    devices consuming 10 to 40Gi of one set each, as MIG partitions of one GPU would; groups claim one or two."""
    sets = [(f"gpu-{i}", rng.choice((40, 80))) for i in range(rng.choice((1, 2)))]
    counters = _own_slice(sc, rng, "part-counters", 2, sharedCounters=[
        {"name": name, "counters": {"memory": {"value": f"{size}Gi"}}} for name, size in sets])
    devices = []
    for name, size in sets:
        for j in range(rng.choice((2, 3, 4))):
            devices.append({"name": f"{name}-part-{j}", "attributes": {"index": {"int": len(devices)}},
                            "consumesCounters": [{"counterSet": name, "counters": {"memory": {
                                "value": f"{rng.choice((10, 20, 30, 40)) * size // 40}Gi"}}}]})
    device_slice = copy.deepcopy(counters)
    device_slice["metadata"]["name"] = f"{sc.name}-part-devices"
    del device_slice["spec"]["sharedCounters"]
    device_slice["spec"]["devices"] = devices
    sc.shared_slices += [counters, device_slice]
    cls = _nic_class(sc)
    for _ in range(rng.choice((1, 2))):
        _new_group(sc, rng, [{"name": "part", "exactly": {"deviceClassName": cls, "count": rng.choice((1, 1, 2))}}],
                   replicas=rng.choice((1, 2, 3)))


DEVICE_TAINTS = ({"key": "example.com/unhealthy", "value": "true", "effect": "NoSchedule"},
                 {"key": "example.com/unhealthy", "value": "false", "effect": "NoSchedule"},
                 {"key": "example.com/maintenance", "effect": "NoExecute"})
DEVICE_TOLERATIONS = ([], [{"key": "example.com/unhealthy", "operator": "Exists"}],
                      [{"key": "example.com/unhealthy", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
                      [{"operator": "Exists", "effect": "NoExecute"}], [{"operator": "Exists"}],
                      [{"operator": "Equal", "value": "false"}])


def _device_taints(sc: Scenario, rng: random.Random) -> None:
    """Tainted devices (DRADeviceTaints) and requests with or without tolerations, in ``exactly`` or in a
    ``firstAvailable`` subrequest."""
    devices = [{"name": f"dev-{i}", "attributes": {"index": {"int": i}},
                **({"taints": [rng.choice(DEVICE_TAINTS)]} if rng.random() < 0.7 else {})}
               for i in range(rng.choice((2, 3, 4)))]
    sc.shared_slices.append(_own_slice(sc, rng, "taint-devices", 1, devices=devices))
    cls = _nic_class(sc)
    for _ in range(rng.choice((1, 2, 3))):
        body: dict[str, Any] = {"deviceClassName": cls, "count": 1}
        tolerations = rng.choice(DEVICE_TOLERATIONS)
        if tolerations:
            body["tolerations"] = tolerations
        request = ({"name": "dev", "firstAvailable": [{"name": "tolerant", **body}]} if rng.random() < 0.3
                   else {"name": "dev", "exactly": body})
        _new_group(sc, rng, [request], replicas=rng.choice((1, 2)))
