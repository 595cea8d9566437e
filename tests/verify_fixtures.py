"""Snapshots of a cluster the dev stack built, in the shapes of real objects, for ``make verify``'s tests.

Built, not hand-written: the Deployment, ResourceClaimTemplates and DeviceClasses come from the dev
stack's offline plan; the replicas are placed where ``make simulate`` puts them; nodes carry the labels the
stack and GKE put there (``cloud.google.com/gke-nodepool``, ``node.kubernetes.io/instance-type``,
``cloud.google.com/gke-accelerator``) and report ``allocatable`` as the kubelet does (CPU in millicores,
memory in Ki); ResourceSlices have seed 000's shape (``spec.driver``, ``nodeName``, ``pool``, ``devices``
with the catalog's attributes); plugin pods carry the charts' pod labels (see :mod:`verify.checks`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import zlib
from typing import Any

from gpu_fungibility import catalog, clouds, sizing

STACK = "dev"
NODE_SUFFIX = "c78060b4"  # seed 000's node names: gke-<cluster>-<pool>-<hash>-<id>


@functools.lru_cache(maxsize=2)
def _planned(stack: str = STACK) -> tuple[Any, list[dict], Any]:
    from offline_plan.manifests import kubernetes_objects
    from offline_plan.run import run_stack_file
    from simulator.engine import simulate

    with contextlib.redirect_stdout(io.StringIO()):
        run = run_stack_file(stack)
    objects = kubernetes_objects(run)
    return run.config, objects, simulate(run.config, objects)


def _node(cfg, pool: str, index: int) -> dict[str, Any]:
    from simulator.cluster import ClusterBuilder

    sim = ClusterBuilder(cfg).node(pool, index)
    from stacks.arguments.eks import node_group_name

    profile = clouds.profile(cfg.cluster.cloud)
    if profile.name == "gke":  # seed 000's node names; the node pool label is the pool's name
        name, group = f"gke-{cfg.cluster.name}-{pool}-{NODE_SUFFIX}-{index:04x}", pool
    elif profile.name == "aks":  # scale-set instance names aks-<pool>-<id>-vmss<index>; the agentpool label is the pool
        name, group = f"aks-{pool}-{int(NODE_SUFFIX, 16) % 10**8:08d}-vmss{index:06x}", pool
    else:  # EC2 private DNS names; managed node groups are <cluster>-<pool>
        name, group = f"ip-10-0-{len(pool)}-{index + 10}.ec2.internal", node_group_name(cfg.cluster.name, pool)
    host = catalog.host_shape(sim.machine)
    cpu, memory = profile.allocatable(host)
    capacity_cpu, capacity_memory = profile.capacity(host)
    labels = {**sim.labels, "kubernetes.io/hostname": name, profile.node_pool_label: group,
              "beta.kubernetes.io/instance-type": sim.machine, "cloud.google.com/gke-os-distribution": "cos",
              "cloud.google.com/machine-family": sim.machine.split("-")[0]}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in sim.taints]},
            "status": {"allocatable": {"cpu": f"{cpu}m", "memory": f"{memory * 1024}Ki", "pods": "110",
                                       "ephemeral-storage": "202891775022"},
                       "capacity": {"cpu": str(capacity_cpu // 1000), "memory": f"{capacity_memory * 1024}Ki",
                                    "pods": "110"}}}, sim


def _slice(node: str, driver: str, entries: list[dict]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{driver}-x7k2q"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"generation": 1, "name": node, "resourceSliceCount": 1}, "devices": entries}}


def pod(namespace: str, name: str, node: str, labels: dict[str, str], owner: tuple[str, str],
        requests: dict[str, str], phase: str = "Running", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    spec.update(extra.pop("spec", {}))
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                              "controller": True, "uid": f"uid-{owner[1]}"}]},
            "spec": spec, "status": {"phase": phase, **extra.pop("status", {})}}


def _daemon(ds: str, namespace: str, labels: dict[str, str], room: tuple[int, int]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": ds, "namespace": namespace},
            "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": [
                {"name": "plugin", "resources": {"requests": {"cpu": f"{room[0]}m", "memory": f"{room[1]}Mi"}}}]}}}}


def plugin_pod(kind: str, node: str) -> dict[str, Any]:
    """A plugin pod on ``node`` with its chart's labels: ``nvidia-dra``, ``tpu-dra``, ``device-plugin``, ``gke``."""
    room = sizing.DAEMON_SET_ROOM
    suffix = _pod_suffix(node)
    if kind == "nvidia-dra":
        labels = {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "app.kubernetes.io/instance": "dra-driver-nvidia-gpu",
                  "dra-driver-nvidia-gpu-component": "kubelet-plugin"}
        return pod("dra-driver-nvidia-gpu", f"dra-driver-nvidia-gpu-kubelet-plugin-{suffix}", node, labels,
                   ("DaemonSet", "dra-driver-nvidia-gpu-kubelet-plugin"),
                   {"cpu": f"{room['NVIDIA DRA kubelet plugin'][0]}m",
                    "memory": f"{room['NVIDIA DRA kubelet plugin'][1]}Mi"})
    if kind == "tpu-dra":
        labels = {"app.kubernetes.io/name": "dra-driver-google-tpu", "app.kubernetes.io/instance": "dra-driver-google-tpu"}
        return pod("dra-driver-google-tpu", f"dra-driver-google-tpu-kubeletplugin-{suffix}", node, labels,
                   ("DaemonSet", "dra-driver-google-tpu-kubeletplugin"), {"cpu": "20m", "memory": "100Mi"})
    if kind == "device-plugin":
        labels = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "nvidia-device-plugin"}
        return pod("nvidia-device-plugin", f"nvidia-device-plugin-{suffix}", node, labels,
                   ("DaemonSet", "nvidia-device-plugin"), {"cpu": "50m", "memory": "64Mi"})
    labels = {"k8s-app": "nvidia-gpu-device-plugin"}
    return pod("kube-system", f"nvidia-gpu-device-plugin-large-cos-{suffix}", node, labels,
               ("DaemonSet", "nvidia-gpu-device-plugin-large-cos"), {"cpu": "50m", "memory": "50Mi"})


def _system_pods(node: str) -> list[dict[str, Any]]:
    """GKE's per-node pods (kube-proxy is a static pod, owned by the Node)."""
    suffix = _pod_suffix(node)
    return [pod("kube-system", f"fluentbit-gke-{suffix}", node, {"k8s-app": "fluentbit-gke"},
                ("DaemonSet", "fluentbit-gke"), {"cpu": "100m", "memory": "200Mi"}),
            pod("kube-system", f"gke-metrics-agent-{suffix}", node, {"k8s-app": "gke-metrics-agent"},
                ("DaemonSet", "gke-metrics-agent"), {"cpu": "8m", "memory": "110Mi"}),
            pod("kube-system", f"pdcsi-node-{suffix}", node, {"k8s-app": "gcp-compute-persistent-disk-csi-driver"},
                ("DaemonSet", "pdcsi-node"), {"cpu": "15m", "memory": "20Mi"})]


def _pod_suffix(node: str) -> str:
    """A DaemonSet pod's name suffix, unique per node (as the controller's random suffix is in a real cluster)."""
    return f"{zlib.crc32(node.encode()):08x}"[-5:]


def snapshot(stack: str = STACK) -> dict[str, Any]:
    """The good cluster: every pool at its min, every replica where the simulator puts it, all promises kept."""
    cfg, objects, result = _planned(stack)
    items: list[dict[str, Any]] = [copy.deepcopy(o) for o in objects
                                   if o.get("kind") in ("Deployment", "ResourceClaimTemplate", "DeviceClass")]
    nodes: dict[str, str] = {}  # simulator node name -> fixture node name
    for pool_name, pool in cfg.node_pools.items():
        count = max(pool.autoscaling.min, sum(1 for r in result.replicas if r.pool == pool_name))
        for index in range(count):
            node, sim = _node(cfg, pool_name, index)
            name = node["metadata"]["name"]
            nodes[sim.name] = name
            items.append(node)
            items += _system_pods(name)
            if sim.devices:
                items.append(_slice(name, sim.devices[0].driver, [d.entry for d in sim.devices]))
            if pool.dra:
                items.append(plugin_pod("tpu-dra" if pool.family == "tpu" else "nvidia-dra", name))
            elif pool.family != "tpu":
                items.append(plugin_pod("gke" if cfg.cluster.cloud == "gke" else "device-plugin", name))
    items += [_daemon("dra-driver-nvidia-gpu-kubelet-plugin", "dra-driver-nvidia-gpu",
                      {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}, sizing.DAEMON_SET_ROOM["NVIDIA DRA kubelet plugin"])]
    items += _serving_pods(cfg, objects, result, nodes)
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _serving_pods(cfg, objects: list[dict], result, nodes: dict[str, str]) -> list[dict[str, Any]]:
    deployments = {o["metadata"].get("labels", {}).get("app.kubernetes.io/instance"): o
                   for o in objects if o.get("kind") == "Deployment"}
    items = []
    for placed in result.replicas:
        # an undetermined replica (several possible outcomes) lands as its first outcome
        r = placed.outcomes[0] if placed.outcomes else placed
        dep = deployments[placed.workload]
        template = copy.deepcopy(dep["spec"]["template"])
        namespace = dep["metadata"].get("namespace", "default")
        name = f"{dep['metadata']['name']}-7d9c5b8f4-{placed.replica:05d}"
        node = nodes.get(r.node or "", "")
        claim_refs = template["spec"].get("resourceClaims") or []
        statuses = [{"name": c["name"], "resourceClaimName": f"{name}-{c['name']}-abcde"} for c in claim_refs]
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": namespace, "labels": template["metadata"]["labels"],
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                        "name": f"{dep['metadata']['name']}-7d9c5b8f4",
                                                        "controller": True, "uid": "uid-rs"}]},
                      "spec": {**template["spec"], "nodeName": node},
                      "status": {"phase": "Running", "resourceClaimStatuses": statuses}})
        for status in statuses[:1]:
            results = [{"request": r.alternatives[0] if r.alternatives else "", "driver": _driver(cfg, r.pool), "pool": node, "device": d.rsplit("/", 1)[-1]} for d in r.devices]
            items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": status["resourceClaimName"], "namespace": namespace},
                          "status": {"allocation": {"devices": {"results": results}}}})
    return items


def _driver(cfg, pool: str | None) -> str:
    spec = cfg.node_pools.get(pool or "")
    return "tpu.google.com" if spec is not None and spec.family == "tpu" else "gpu.nvidia.com"


def nodes_of(snap: dict[str, Any], pool: str) -> list[dict[str, Any]]:
    return [i for i in snap["items"] if i["kind"] == "Node"
            and i["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == pool]


# ---- one fixture per broken promise ---------------------------------------------------------


def colocated() -> dict[str, Any]:
    """GKE's own device plugin on an A100 80GB node next to the NVIDIA DRA kubelet plugin."""
    snap = snapshot()
    snap["items"].append(plugin_pod("gke", nodes_of(snap, "a100-80gb")[0]["metadata"]["name"]))
    return snap


def missing_slice() -> dict[str, Any]:
    """The A100 80GB node publishes no ResourceSlice."""
    snap = snapshot()
    node = nodes_of(snap, "a100-80gb")[0]["metadata"]["name"]
    snap["items"] = [i for i in snap["items"] if not (i["kind"] == "ResourceSlice" and i["spec"]["nodeName"] == node)]
    return snap


def pending_memory() -> dict[str, Any]:
    """One more vllm-gpu replica, Pending: its memory request fits no node."""
    snap = snapshot()
    serving = next(i for i in snap["items"] if i["kind"] == "Pod"
                   and i["metadata"]["labels"].get("app.kubernetes.io/instance") == "vllm-gpu")
    extra = copy.deepcopy(serving)
    extra["metadata"]["name"] = serving["metadata"]["name"][:-5] + "99999"
    extra["spec"].pop("nodeName", None)
    extra["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                           "reason": "Unschedulable"}]}
    message = ("0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector. "
               "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
               "2 Preemption is not helpful for scheduling.")
    snap["items"] += [extra, {"apiVersion": "v1", "kind": "Event", "reason": "FailedScheduling", "type": "Warning",
                              "message": message, "lastTimestamp": "2026-11-23T10:00:00Z",
                              "metadata": {"name": "vllm-gpu.1", "namespace": extra["metadata"]["namespace"]},
                              "involvedObject": {"kind": "Pod", "name": extra["metadata"]["name"],
                                                 "namespace": extra["metadata"]["namespace"]}}]
    return snap


def drift() -> dict[str, Any]:
    """The A100 80GB node reports 2 GiB less allocatable memory than the library estimates."""
    snap = snapshot()
    node = nodes_of(snap, "a100-80gb")[0]
    memory_ki = int(node["status"]["allocatable"]["memory"][:-2]) - 2 * 1024 * 1024
    node["status"]["allocatable"]["memory"] = f"{memory_ki}Ki"
    return snap


VARIANTS = {"good": snapshot, "colocated": colocated, "missing_slice": missing_slice,
            "pending_memory": pending_memory, "drift": drift}
