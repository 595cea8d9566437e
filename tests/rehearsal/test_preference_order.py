"""Kubernetes' own scheduler keeps the pool order on running nodes, and agrees with the simulator's scores.

For eks-dev, aks-dev and prod, at each stack's Kubernetes minor: one running node of every pool of the
serving workload's list (fake Nodes with the pool's labels, taints and allocatable, a pod holding what the
cloud's system pods and the stack's DaemonSets request, the ResourceSlice the NVIDIA driver publishes), the
plan's DeviceClasses, claim template, Service and Deployment applied for real; replicas added one at a time.
The real scheduler must put them on the pools in the list's order, as the simulator says. Without the
preferred affinity, eks-dev's first replica goes to the bigger a10g-4x node: the real scheduler and the
simulator agree on that too.

GKE adds the compute-class toleration to pods that select a class (an admission webhook the rehearsal does
not run); the test adds it to the pod template, as the simulator does.
"""

from __future__ import annotations

import contextlib
import copy
import io

import pytest
from gpu_fungibility import clouds, sizing

from offline_plan.manifests import kubernetes_objects
from offline_plan.run import run_stack_file
from rehearse.control_plane import Harness, HarnessUnavailable, ensure_built
from simulator import simulate
from simulator.cluster import DRIVER_DEVICE_CLASSES, ClusterBuilder
from stacks.config import StackConfig
from tests.ci import unavailable

WORKLOAD = "vllm-gpu"
FILLER_NAMESPACE = "rehearsal-reserved"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def _control_plane(minor: str) -> Harness:
    try:
        ensure_built(minor)
    except HarnessUnavailable as exc:
        unavailable(str(exc))
    return Harness.start(minor)


def _running_everywhere(cfg: StackConfig) -> StackConfig:
    """The stack with one running node (at least) in every pool of the workload's list."""
    pools = dict(cfg.node_pools)
    for name in cfg.placement_pools(cfg.workloads[WORKLOAD]):
        pool = pools[name]
        low = max(pool.autoscaling.min, 1)
        autoscaling = pool.autoscaling.model_copy(update={"min": low, "max": max(pool.autoscaling.max, low)})
        pools[name] = pool.model_copy(update={"autoscaling": autoscaling})
    return cfg.model_copy(update={"node_pools": pools})


def _cluster_objects(cfg: StackConfig) -> tuple[list[dict], dict[str, str]]:
    """Nodes, their reserved requests and ResourceSlices, and the driver's DeviceClasses; node -> pool."""
    builder = ClusterBuilder(cfg)
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FILLER_NAMESPACE}}]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                 "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}
                for name, expressions in DRIVER_DEVICE_CLASSES.items()]
    pool_of: dict[str, str] = {}
    for name in cfg.placement_pools(cfg.workloads[WORKLOAD]):
        pool = cfg.node_pools[name]
        for index in range(pool.autoscaling.min):
            node = builder.node(name, index)
            room = sizing.node_room(cfg.cluster.cloud, node.machine, pool.family or "gpu", pool.dra)
            assert room is not None, node.machine
            pool_of[node.name] = name
            allocatable = {"cpu": f"{room.allocatable[0]}m", "memory": f"{room.allocatable[1]}Mi", "pods": "110"}
            objects.append({
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": node.labels},
                "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} if t.value else
                                    {"key": t.key, "effect": t.effect} for t in node.taints]},
                "status": {"capacity": allocatable, "allocatable": allocatable,
                           "conditions": [{"type": "Ready", "status": "True"}]}})
            objects.append({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"reserved-{node.name}", "namespace": FILLER_NAMESPACE},
                "spec": {"nodeName": node.name, "tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "reserved", "image": PAUSE_IMAGE, "resources": {"requests": {
                             "cpu": f"{room.reserved[0]}m", "memory": f"{room.reserved[1]}Mi"}}}]}})
            if node.devices:
                objects.append({
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{node.name}-slice"},
                    "spec": {"driver": node.devices[0].driver, "nodeName": node.name,
                             "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                             "devices": [d.entry for d in node.devices]}})
    return objects, pool_of


def _workload_objects(cfg: StackConfig, plan: list[dict], *, preferred: bool) -> tuple[list[dict], dict]:
    """The plan's namespace, DeviceClasses, claim template and Service, and its Deployment (returned apart)."""
    deployment = copy.deepcopy(next(o for o in plan if o.get("kind") == "Deployment"
                                    and o["metadata"]["name"] == WORKLOAD))
    namespace = deployment["metadata"]["namespace"]
    pod = deployment["spec"]["template"]["spec"]
    pod["tolerations"] = [*(pod.get("tolerations") or []),
                          *clouds.profile(cfg.cluster.cloud).implied_tolerations(pod.get("nodeSelector") or {})]
    if not preferred:
        pod.pop("affinity", None)
    wanted = {("Namespace", namespace), ("Service", WORKLOAD)}
    objects = [o for o in plan if (o.get("kind"), o["metadata"]["name"]) in wanted
               or o.get("kind") in ("DeviceClass", "ResourceClaimTemplate")]
    return objects, deployment


def _ints(value):
    """Whole floats (the plan's numbers pass through Pulumi mocks) as ints, for the API server."""
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _new_pods(cluster: Harness, namespace: str, seen: set[str]) -> list[dict]:
    pods = [p for p in cluster.list("pods")["pods"]
            if p["metadata"]["namespace"] == namespace and p["metadata"]["name"] not in seen]
    seen.update(p["metadata"]["name"] for p in pods)
    return pods


def _at_minor(cfg: StackConfig, minor: str | None) -> StackConfig:
    if minor is None:
        return cfg
    return cfg.model_copy(update={"cluster": cfg.cluster.model_copy(update={"kubernetes_version": minor})})


def _rehearse(stack: str, *, preferred: bool = True, replicas: int | None = None,
              minor: str | None = None) -> tuple[list[str], list[str]]:
    """(real scheduler's pools, simulator's pools) for replicas added one at a time, at the stack's minor
    (or ``minor``)."""
    with contextlib.redirect_stdout(io.StringIO()):
        run = run_stack_file(stack)
    cfg = _at_minor(_running_everywhere(run.config), minor)
    plan = kubernetes_objects(run)
    count = replicas or len(cfg.placement_pools(cfg.workloads[WORKLOAD]))
    cluster_objects, pool_of = _cluster_objects(cfg)
    workload, deployment = _workload_objects(cfg, plan, preferred=preferred)
    sim_plan = [deployment if o.get("kind") == "Deployment" and o["metadata"]["name"] == WORKLOAD else o
                for o in plan]
    simulated = [r.pool or r.status for r in
                 simulate(cfg, sim_plan, replicas={WORKLOAD: count}).of(WORKLOAD)]
    real: list[str] = []
    seen: set[str] = set()
    with _control_plane(cfg.cluster.minor_version) as cluster:
        for result in cluster.apply(_ints(cluster_objects + workload)):
            assert result.ok, f"{result.ref}: {result.error}"
        for k in range(1, count + 1):
            deployment["spec"]["replicas"] = k
            (result,) = cluster.apply(_ints([deployment]))
            assert result.ok, f"{result.ref}: {result.error}"
            cluster.settle(timeout_s=120)
            (pod,) = _new_pods(cluster, deployment["metadata"]["namespace"], seen)
            real.append(pool_of.get(pod["spec"].get("nodeName") or "", "pending"))
    return real, simulated


#: Besides each stack's own minor, the minor the stacks move to next (with prioritized-list scoring).
NEXT_MINOR = "1.35"
STACKS = ["eks-dev", "aks-dev", "prod"]


def _minors(stack: str) -> list[str | None]:
    with contextlib.redirect_stdout(io.StringIO()):
        own = run_stack_file(stack).config.cluster.minor_version
    return [None] if own == NEXT_MINOR else [None, NEXT_MINOR]


CASES = [(stack, minor) for stack in STACKS for minor in _minors(stack)]


@pytest.mark.parametrize(("stack", "minor"), CASES, ids=[f"{s}-{m or 'own'}" for s, m in CASES])
def test_replicas_fill_the_pools_in_the_lists_order(stack, minor):
    with contextlib.redirect_stdout(io.StringIO()):
        cfg = run_stack_file(stack).config
    order = cfg.placement_pools(cfg.workloads[WORKLOAD])
    real, simulated = _rehearse(stack, minor=minor)
    assert real == order, f"Kubernetes {minor or cfg.cluster.minor_version} placed {real}, the list is {order}"
    assert simulated == real


@pytest.mark.parametrize("minor", _minors("eks-dev"), ids=lambda m: m or "own")
def test_without_the_preference_the_bigger_fallback_node_wins_on_eks_dev(minor):
    """The prioritized-list score of 1.35 does not outweigh LeastAllocated: the affinity is needed."""
    real, simulated = _rehearse("eks-dev", preferred=False, replicas=1, minor=minor)
    assert real == ["a10g-4x"]
    assert simulated == real
