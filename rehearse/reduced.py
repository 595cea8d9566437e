"""Reduced cases: one small scenario per way the simulator once disagreed with kube-scheduler, recorded from it.

``python -m rehearse.reduced --record tests/fixtures/differential [--minor 1.35]`` places each case on
Kubernetes' own control plane (:mod:`rehearse.control_plane`, as :mod:`rehearse.differential` does) and writes it with the
real scheduler's answer as ``reduced-<case>.json``; ``tests/test_differential_replay.py`` replays every fixture
there against the simulator without Go, and ``tests/test_differential_reduced.py`` states what each one shows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_fungibility import device_selectors

from rehearse import scenarios as gen
from rehearse.scenario_families import nic_devices, nic_driver
from rehearse.scenarios import NVIDIA, POOL_LABEL, SCENARIO_LABEL, ZONE_LABEL, Group, Pool, Scenario

GPU = device_selectors.GPU_DEVICE_CLASS
CASES: dict[str, tuple[str, Callable[[str], Scenario]]] = {}


def case(why: str):
    def register(build: Callable[[str], Scenario]) -> Callable[[str], Scenario]:
        CASES[build.__name__] = (why, build)
        return build
    return register


def _pool(sc: str, name: str, kind: str = "gpu", accelerator: str | None = "nvidia-l4", count: int = 1,
          nodes: int = 1, cpu: int = 8, memory_gi: int = 32, **labels: str) -> Pool:
    return Pool(name, kind, accelerator if kind != "cpu" else None, count if kind != "cpu" else 0, (), nodes, cpu,
                memory_gi, {SCENARIO_LABEL: sc, POOL_LABEL: name, "kubernetes.io/os": "linux", **labels}, [])


def _pod(sc: str, cpu: str = "100m", memory: str = "64Mi", **extra: Any) -> dict[str, Any]:
    pod = {"nodeSelector": {SCENARIO_LABEL: sc}, "terminationGracePeriodSeconds": 0,
           "containers": [{"name": "main", "image": gen.PAUSE_IMAGE,
                           "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    pod.update(extra)
    return pod


def _claimed(sc: Scenario, group: str, requests: list[dict[str, Any]], pod: dict[str, Any] | None = None,
             replicas: int = 1, constraints: list[dict[str, Any]] | None = None, kind: str = "Pod") -> Group:
    name = f"{sc.name}-{group}"
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"{name}-claim0", "namespace": gen.NAMESPACE},
                "spec": {"spec": {"devices": devices}}}
    pod = pod or _pod(sc.name)
    pod["resourceClaims"] = [{"name": "c0", "resourceClaimTemplateName": template["metadata"]["name"]}]
    found = Group(name, kind, replicas, pod, [template])
    sc.groups.append(found)
    return found


def _exactly(device_class: str = GPU, count: int = 1, *selectors: str, **more: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": device_class, "count": count, **more}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return body


def _scenario(name: str, *pools: Pool, family: str) -> Scenario:
    return Scenario(0, 0, name, list(pools), [], family=family)


# ---- pod requests as the scheduler computes them ----


@case("Requests default from limits: each pod's limit of 1500m CPU is its request, so a 2-CPU node takes one.")
def limits(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=2, memory_gi=4), family="pod-resources")
    pod = _pod(name)
    pod["containers"][0]["resources"] = {"limits": {"cpu": "1500m", "memory": "256Mi"}}
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, pod, []))
    return sc


@case("An init container's request counts when it is the largest: 3 CPUs of 4 per pod, so one pod fits.")
def init_container(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=4, memory_gi=8), family="pod-resources")
    pod = _pod(name, cpu="1")
    pod["initContainers"] = [{"name": "init", "image": gen.PAUSE_IMAGE,
                              "resources": {"requests": {"cpu": "3", "memory": "64Mi"}}}]
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, pod, []))
    return sc


@case("A sidecar (an init container with restartPolicy Always) runs beside the containers: 1 + 1 CPU per pod, "
      "so a 3-CPU node takes one pod; a later ordinary init container adds the sidecars started before it.")
def sidecar(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=3, memory_gi=8), family="pod-resources")
    pod = _pod(name, cpu="1")
    pod["initContainers"] = [
        {"name": "side", "image": gen.PAUSE_IMAGE, "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}},
        {"name": "init", "image": gen.PAUSE_IMAGE, "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}}}]
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, pod, []))
    return sc


@case("Quantities are exact: two pods of 536870913 bytes (512Mi + 1) do not fit a node with 1Gi allocatable.")
def byte_quantities(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=4, memory_gi=1), family="pod-resources")
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, _pod(name, memory="536870913"), []))
    return sc


# ---- shared claims and slices without a node ----


@case("Pods naming one ResourceClaim share its device: all three land on the node that holds it, beside a "
      "template pod that takes the other node's GPU.")
def shared_claim(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", nodes=2), family="shared-claim")
    claim = f"{name}-shared"
    sc.claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": claim, "namespace": gen.NAMESPACE},
                      "spec": {"devices": {"requests": [{"name": "gpu", "exactly": _exactly()}]}}})
    pod = _pod(name, resourceClaims=[{"name": "c0", "resourceClaimName": claim}])
    sc.groups.append(Group(f"{name}-g0", "Pod", 3, pod, []))
    _claimed(sc, "g1", [{"name": "gpu", "exactly": _exactly()}], replicas=2)
    return sc


def _shared_nic_claim(sc: Scenario, name: str) -> str:
    """Three NICs in one allNodes ResourceSlice, their device class, and one ResourceClaim of one NIC that pods
    share; returns the claim's name."""
    sc.shared_slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": f"{name}-nic0"},
                             "spec": {"driver": nic_driver(name), "allNodes": True, "devices": nic_devices("nic0", 3, _Fixed()),
                                      "pool": {"name": f"{name}-nic0", "generation": 1, "resourceSliceCount": 1}}})
    nic = f"{name}-nic"
    sc.device_classes.append(gen.device_class(nic, [device_selectors.driver_is(nic_driver(name))]))
    claim = f"{name}-shared"
    sc.claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": claim, "namespace": gen.NAMESPACE},
                      "spec": {"devices": {"requests": [{"name": "nic", "exactly": _exactly(nic)}]}}})
    return claim


@case("Devices of a ResourceSlice with allNodes serve every node, once: three NICs for four pods of one each, "
      "across two nodes; a claim of them shared by two pods holds one NIC.")
def all_nodes_slice(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", nodes=2), family="network-slices")
    claim = _shared_nic_claim(sc, name)
    nic = f"{name}-nic"
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, _pod(name, resourceClaims=[{"name": "c0",
                                                                                  "resourceClaimName": claim}]), []))
    _claimed(sc, "g1", [{"name": "nic", "exactly": _exactly(nic)}], replicas=3)
    return sc


@case("A ResourceSlice with a nodeSelector offers its devices to the selected pool only.")
def node_selector_slice(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu"), _pool(name, "p1", "cpu", cpu=16), family="network-slices")
    sc.shared_slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": f"{name}-nic0"},
                             "spec": {"driver": nic_driver(name), "devices": nic_devices("nic0", 2, _Fixed()),
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                                          {"key": POOL_LABEL, "operator": "In", "values": ["p0"]}]}]},
                                      "pool": {"name": f"{name}-nic0", "generation": 1, "resourceSliceCount": 1}}})
    nic = f"{name}-nic"
    sc.device_classes.append(gen.device_class(nic, [device_selectors.driver_is(nic_driver(name))]))
    _claimed(sc, "g0", [{"name": "nic", "exactly": _exactly(nic)}], replicas=3)
    return sc


class _Fixed:
    """A stand-in for random.Random that always takes the first choice (the reduced cases are fixed)."""

    def choice(self, options):
        return options[0]

    def random(self) -> float:
        return 0.0


# ---- adminAccess ----


@case("An adminAccess request does not take its device: an ordinary pod holds the one GPU, two admin pods get "
      "it too, and a second ordinary pod stays pending.")
def admin_access(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0"), family="admin-access")
    _claimed(sc, "g0", [{"name": "gpu", "exactly": _exactly()}])
    _claimed(sc, "g1", [{"name": "gpu", "exactly": _exactly(adminAccess=True)}], replicas=2)
    _claimed(sc, "g2", [{"name": "gpu", "exactly": _exactly()}])
    return sc


# ---- the allocator's order ----

ERRING = f"device.attributes['{NVIDIA}'].missing == 1"


@case("Selectors are evaluated before the allocator finds too few devices: a first alternative of two GPUs on a "
      "one-GPU node whose selector fails at runtime fails the pod, though its second alternative fits.")
def selectors_before_counts(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0"), family="cel")
    _claimed(sc, "g0", [{"name": "gpu", "firstAvailable": [{"name": "two", **_exactly(GPU, 2, ERRING)},
                                                           {"name": "one", **_exactly()}]}])
    return sc


@case("Every All subrequest is prepared before the search: a later alternative's selector error fails the pod "
      "although the first alternative fits.")
def all_prepared_up_front(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", count=2), family="cel")
    _claimed(sc, "g0", [{"name": "gpu", "firstAvailable": [
        {"name": "one", **_exactly()},
        {"name": "all", "deviceClassName": GPU, "allocationMode": "All",
         "selectors": [{"cel": {"expression": ERRING}}]}]}])
    return sc


@case("A firstAvailable entry naming a DeviceClass that does not exist leaves the pod unschedulable, although "
      "the first entry fits.")
def unknown_class(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0"), family="admission")
    _claimed(sc, "g0", [{"name": "gpu", "firstAvailable": [{"name": "one", **_exactly()},
                                                           {"name": "other", **_exactly(f"{name}-nope")}]}])
    return sc


# ---- CEL as cel-go evaluates it ----


@case("cel-go's heterogeneous equality and cross-type ordering pick NICs: index < 1.5 (int against double) "
      "selects two, index >= 2u (against uint) one, model == 100 none (false, not an error), 'x' == version is "
      "false while version == 'x' is an error (Kubernetes' Semver.Equal) and version != 'x' true (cel-go's "
      "evalNe), string(version) has no overload.")
def cel_cross_types(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=16), family="cel")
    sc.shared_slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": f"{name}-nic0"},
                             "spec": {"driver": nic_driver(name), "allNodes": True, "devices": nic_devices("nic0", 6, _Fixed()),
                                      "pool": {"name": f"{name}-nic0", "generation": 1, "resourceSliceCount": 1}}})
    nic = f"{name}-nic"
    sc.device_classes.append(gen.device_class(nic, [device_selectors.driver_is(nic_driver(name))]))
    attr = f"device.attributes['{nic_driver(name)}']"
    for i, (count, expression) in enumerate([
        (2, f"{attr}.index < 1.5"),
        (1, f"{attr}.index >= 3u"),
        (1, f"{attr}.model == 100"),
        (1, f"!('1.9.0' == {attr}.firmware) && {attr}.model != 100"),
        (1, f"{attr}.firmware == '1.9.0'"),
        (1, f"string({attr}.firmware) == '1.9.0'"),
        (1, f"sets.contains(['cx6', 'cx7'], [{attr}.model]) && {attr}.?vendor.orValue('none') == 'none'"),
        (1, f"{attr}.firmware != '1.9.0'"),
    ]):
        _claimed(sc, f"g{i}", [{"name": "nic", "exactly": _exactly(nic, count, expression)}],
                 pod=_pod(name, tolerations=[{"operator": "Exists"}]))
    return sc


# ---- admission ----


@case("What the API server refuses in a claim template (q.sign() as a method, an invalid regex literal, a "
      "heterogeneous list literal, a constraint naming an unknown request, nine subrequests) leaves its pods "
      "pending; cpu \"0\" and count 0 (defaulted to 1) it accepts.")
def admission(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", count=4), family="admission")
    mem = f"device.capacity['{NVIDIA}'].memory"
    product = f"device.attributes['{NVIDIA}'].productName"
    _claimed(sc, "g0", [{"name": "gpu", "exactly": _exactly(GPU, 1, f"{mem}.sign() == 1")}])
    _claimed(sc, "g1", [{"name": "gpu", "exactly": _exactly(GPU, 1, f"{product}.matches('[')")}])
    _claimed(sc, "g2", [{"name": "gpu", "exactly": _exactly(GPU, 1, f"{product} in ['NVIDIA L4', 1]")}])
    _claimed(sc, "g3", [{"name": "gpu", "exactly": _exactly()}],
             constraints=[{"matchAttribute": f"{NVIDIA}/productName", "requests": ["gpu", "other"]}])
    _claimed(sc, "g4", [{"name": "gpu", "firstAvailable": [{"name": f"s{k}", **_exactly()} for k in range(9)]}])
    sc.meant_refused += [f"ResourceClaimTemplate/{gen.NAMESPACE}/{name}-g{i}-claim0" for i in range(5)]
    _claimed(sc, "g5", [{"name": "gpu", "exactly": _exactly(GPU, 1, f"sign({mem}) == 1")}], pod=_pod(name, cpu="0"))
    _claimed(sc, "g6", [{"name": "gpu", "exactly": _exactly(GPU, 0)}])
    return sc


# ---- scores ----


@case("A preferred node-affinity term of weight 100 outweighs NodeResourcesFit: the pod goes to the small "
      "preferred node, not the large empty one.")
def preferred_affinity(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=4, memory_gi=8),
                   _pool(name, "p1", "cpu", cpu=48, memory_gi=128), family="preferred-affinity")
    pod = _pod(name, cpu="1", memory="1Gi", affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": [
            {"key": POOL_LABEL, "operator": "In", "values": ["p0"]}]}}]}})
    sc.groups.append(Group(f"{name}-g0", "Pod", 2, pod, []))
    return sc


@case("Zone-labelled nodes: PodTopologySpread's zone constraint spreads a Deployment's replicas over the zones, "
      "so the fourth replica goes to zone-b's one node (two there), not to either node of zone-a.")
def zones(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=8, nodes=2, **{ZONE_LABEL: "zone-a"}),
                   _pool(name, "p1", "cpu", cpu=8, **{ZONE_LABEL: "zone-b"}), family="zones")
    sc.groups.append(Group(f"{name}-g0", "Deployment", 4, _pod(name, cpu="500m"), []))
    return sc


# ---- what changed in 1.36 (recorded on v1.36.3 and v1.35.4: reduced-<case>-v1.3x.json) ----

#: Cases whose answer depends on the minor: its feature gates (gpu_fungibility.versions.DRA_FEATURE_GATES_ON_FROM)
#: or a score plugin that changed; recorded per minor, ``python -m rehearse.reduced --record DIR --minor 1.36 --gated``.
GATED_CASES: dict[str, tuple[str, Callable[[str], Scenario]]] = {}


def gated_case(why: str):
    def register(build: Callable[[str], Scenario]) -> Callable[[str], Scenario]:
        GATED_CASES[build.__name__] = (why, build)
        return build
    return register


def _pool_slices(name: str, suffix: str, **spec: Any) -> dict[str, Any]:
    """A ResourceSlice of the scenario's own driver, offered to pool p0 by a nodeSelector."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-{suffix}"},
            "spec": {"driver": nic_driver(name), "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": POOL_LABEL, "operator": "In", "values": ["p0"]}]}]}, **spec}}


def _own_class(sc: Scenario) -> str:
    name = f"{sc.name}-dev"
    sc.device_classes.append(gen.device_class(name, [device_selectors.driver_is(nic_driver(sc.name))]))
    return name


@gated_case("Partitionable devices (DRAPartitionableDevices, on from 1.36): two counter sets of 40Gi, two "
            "devices consuming 30Gi of the first and one 30Gi of the second; three pods of one device each: 1.36 "
            "places two (one per counter set), 1.35 drops the counters and places all three.")
def partitionable(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu"), family="partitionable")
    pool = {"name": f"{name}-gpu", "generation": 1, "resourceSliceCount": 2}
    sc.shared_slices.append(_pool_slices(name, "counters", pool=pool, sharedCounters=[
        {"name": f"gpu-{i}-counters", "counters": {"memory": {"value": "40Gi"}}} for i in range(2)]))
    sc.shared_slices.append(_pool_slices(name, "devices", pool=pool, devices=[
        {"name": f"gpu-{g}-part-{p}", "attributes": {"index": {"int": 2 * g + p}},
         "consumesCounters": [{"counterSet": f"gpu-{g}-counters", "counters": {"memory": {"value": "30Gi"}}}]}
        for g, p in ((0, 0), (0, 1), (1, 0))]))
    _claimed(sc, "g0", [{"name": "part", "exactly": _exactly(_own_class(sc))}], replicas=3)
    return sc


@gated_case("Device taints (DRADeviceTaints, on from 1.36): a NoSchedule and a NoExecute device; a pod without "
            "tolerations and one whose Equal toleration names another value stay pending on 1.36, an Exists "
            "toleration of the NoSchedule taint (in a firstAvailable subrequest) and an empty-key Exists take one "
            "each; 1.35 drops taints and tolerations and places the first two.")
def device_taints(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu"), family="device-taints")
    sc.shared_slices.append(_pool_slices(name, "devices", pool={"name": f"{name}-gpu", "generation": 1,
                                                                 "resourceSliceCount": 1}, devices=[
        {"name": "gpu-0", "attributes": {"index": {"int": 0}},
         "taints": [{"key": "example.com/unhealthy", "value": "true", "effect": "NoSchedule"}]},
        {"name": "gpu-1", "attributes": {"index": {"int": 1}},
         "taints": [{"key": "example.com/maintenance", "effect": "NoExecute"}]}]))
    cls = _own_class(sc)
    _claimed(sc, "g0", [{"name": "gpu", "exactly": _exactly(cls)}])
    _claimed(sc, "g1", [{"name": "gpu", "exactly": _exactly(cls, tolerations=[
        {"key": "example.com/unhealthy", "operator": "Equal", "value": "false", "effect": "NoSchedule"}])}])
    _claimed(sc, "g2", [{"name": "gpu", "firstAvailable": [{"name": "tolerant", "deviceClassName": cls,
                                                            "tolerations": [{"key": "example.com/unhealthy",
                                                                             "operator": "Exists",
                                                                             "effect": "NoSchedule"}]}]}])
    _claimed(sc, "g3", [{"name": "gpu", "exactly": _exactly(cls, tolerations=[{"operator": "Exists"}])}])
    return sc


@gated_case("NodeResourcesBalancedAllocation scores the change a pod makes to a node's balance from 1.36 "
            "(balancedResourceScorer), the balance with it before: a 2-CPU 4Gi pod evens out an empty 4-CPU 8Gi "
            "node, which wins it on 1.35; on 1.36 it changes neither node's balance, and LeastAllocated sends it "
            "to the 16-CPU 32Gi node beside a memory-heavy pod.")
def balance_change(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu", cpu=16, memory_gi=32),
                   _pool(name, "p1", "cpu", cpu=4, memory_gi=8), family="base")
    heavy = _pod(name, cpu="100m", memory="16Gi")
    heavy["nodeSelector"][POOL_LABEL] = "p0"
    sc.groups.append(Group(f"{name}-g0", "Pod", 1, heavy, []))
    sc.groups.append(Group(f"{name}-g1", "Pod", 1, _pod(name, cpu="2", memory="4Gi"), []))
    return sc


@gated_case("A pod with a ResourceClaim another pod allocated (a NIC of an allNodes slice) and a claim template, "
            "on two nodes: 1.35's DynamicResources Score fails on it (\"number of allocations 1 is smaller than "
            "number of claims\") and it stays pending; 1.36 reads the allocated claim from its status and places it "
            "on the node its preferred affinity names.")
def mixed_claims(name: str) -> Scenario:
    sc = _scenario(name, _pool(name, "p0", "cpu"), _pool(name, "p1", "cpu"), family="shared-claim")
    claim = _shared_nic_claim(sc, name)
    nic = f"{name}-nic"
    first = _pod(name, resourceClaims=[{"name": "c0", "resourceClaimName": claim}])
    first["nodeSelector"][POOL_LABEL] = "p0"
    sc.groups.append(Group(f"{name}-g0", "Pod", 1, first, []))
    both = _claimed(sc, "g1", [{"name": "nic", "exactly": _exactly(nic)}], pod=_pod(name, affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": [
            {"key": POOL_LABEL, "operator": "In", "values": ["p1"]}]}}]}}))
    both.pod["resourceClaims"].append({"name": "shared", "resourceClaimName": claim})
    return sc


@gated_case("Dynamic MIG (the NVIDIA driver's DynamicMIG gate, as gpu_fungibility.devices publishes it): one H100's "
            "slice of counter sets and its 26 devices (the GPU and every profile at every placement); three pods of "
            "one 3g.40gb or 4g.40gb each: 1.36 places the two 3g.40gb, which hold all eight memory slices, and "
            "refuses the 4g.40gb; 1.35 drops the counters and places all three, overlapping.")
def dynamic_mig(name: str) -> Scenario:
    from gpu_fungibility import devices

    sc = _scenario(name, _pool(name, "p0", "cpu"), family="partitionable")
    published = devices.node_resource_slices("h100", "nvidia-h100-80gb", 1, cluster=name, dynamic_mig=True)
    pool = {"name": f"{name}-gpu", "generation": 1, "resourceSliceCount": len(published)}
    for i, s in enumerate(published):
        body = {k: v for k, v in s["spec"].items() if k in ("sharedCounters", "devices")}
        sc.shared_slices.append(_pool_slices(name, f"s{i}", pool=pool, **body))
    driver = nic_driver(name)
    _claimed(sc, "g0", [{"name": "mig", "exactly": _exactly(
        _own_class(sc), 1, f"device.attributes['{driver}'].type == 'mig' && "
                           f"device.attributes['{driver}'].profile in ['3g.40gb', '4g.40gb']")}], replicas=3)
    return sc


def build(key: str, index: int, cases: dict | None = None) -> Scenario:
    sc = (cases or CASES)[key][1](f"r{index:02d}")
    sc.index = index
    return sc


def all_cases(cases: dict | None = None) -> list[tuple[str, Scenario]]:
    return [(key, build(key, i, cases)) for i, key in enumerate(cases or CASES)]


def record(directory: Path, minor: str, progress=print, gated: bool = False,
           only: list[str] | None = None) -> list[Path]:
    """Record every case (``gated``: every :data:`GATED_CASES` case, its file named for the minor; ``only``: these
    cases)."""
    from rehearse import differential
    from rehearse.control_plane import Harness, ensure_built
    from rehearse.simside import simulate

    ensure_built(minor, progress=progress)
    written = []
    registry = GATED_CASES if gated else CASES
    built = [(key, sc) for key, sc in all_cases(registry) if not only or key in only]
    cases = {sc.name: differential.Case(sc.document(), simulate(sc.document(), kubernetes=minor))
             for _, sc in built}
    with Harness.start(minor) as harness:
        differential.run_batch(harness, [sc for _, sc in built], cases, reset=False,
                               pause_s=differential.ALONE_PAUSE_S)
        version = harness.version
    for key, sc in built:
        case = cases[sc.name]
        suffix = f"-v{'.'.join(version.lstrip('v').split('.')[:2])}" if gated else ""
        path = directory / f"reduced-{key.replace('_', '-')}{suffix}.json"
        data = {"kubernetes": version, "seed": 0, "document": case.document, "observed": case.observed,
                "applyErrors": case.apply_errors, "why": registry[key][0], "determinate": True}
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        written.append(path)
        progress(f"{path.name}: {'agrees' if case.verdict.agrees else 'DISAGREES'}\n"
                 + "".join(f"  {p['group']}: {p['node']} {p['picks']} {p['reason'] or ''}\n"
                           for p in case.observed["pods"])
                 + "".join(f"  refused {e}\n" for e in case.apply_errors))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rehearse.reduced", description=__doc__.split("\n")[0])
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--minor", default="1.35")
    parser.add_argument("--gated", action="store_true",
                        help="record the cases whose answer depends on the minor's DRA feature gates")
    parser.add_argument("--case", action="append", help="record only this case (repeatable)")
    args = parser.parse_args(argv)
    record(args.record, args.minor, gated=args.gated, only=args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
