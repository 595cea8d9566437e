"""Where the replicas are and why, and how far the sizing model is from the real nodes.

Each check is a pure function over the view, the stack and (for replicas) the simulator's prediction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from gpu_fungibility import catalog, sizing

from verify.checks import DEVICE_PLUGIN, NVIDIA_DRA, TPU_DRA, plugin_kind
from verify.findings import FAILURE, OK, WARNING, Finding
from verify.snapshot import Event, Pod, View
from verify.stack import Stack

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
WORKLOAD_NAME_LABEL, WORKLOAD_LABEL = "app.kubernetes.io/name", "app.kubernetes.io/instance"

#: Scheduler and autoscaler messages (kubernetes/kubernetes pkg/scheduler/framework/plugins: noderesources
#: "Insufficient <resource>", dynamicresources "cannot allocate all claims"; kubernetes/autoscaler
#: NotTriggerScaleUp "max node group size reached") mapped to what the user can change.
REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Insufficient (memory|cpu)"),
     "lower the workload's resources (gpu-fungibility:workloads.<w>.resources) or give the pool a larger machine"),
    (re.compile(r"cannot allocate all claims|Insufficient nvidia\.com/gpu|Insufficient google\.com/tpu"),
     "no node has free devices for the claim: raise the pool's autoscaling.max, wait out a stockout, or raise "
     "the accelerator quota (make preflight)"),
    (re.compile(r"max node group size reached|max cluster (cores|memory)"),
     "the pool is at autoscaling.max: raise it (gpu-fungibility:nodePools.<p>.autoscaling.max)"),
    (re.compile(r"[Qq]uota|stockout|ZONE_RESOURCE_POOL_EXHAUSTED|InsufficientInstanceCapacity"),
     "the cloud cannot add a node: quota or stockout (make preflight names which)"),
)


def workload_pods(view: View) -> dict[str, list[Pod]]:
    found: dict[str, list[Pod]] = {}
    for pod in view.pods:
        if pod.labels.get(WORKLOAD_NAME_LABEL) == "vllm" and pod.active:
            found.setdefault(pod.labels.get(WORKLOAD_LABEL, pod.name), []).append(pod)
    return found


def _latest(view: View, pod: Pod) -> Event | None:
    """The pod's newest scheduling event, by its RFC 3339 time (an event without one counts as oldest)."""
    mine = [e for e in view.events_of(pod.namespace, "Pod", pod.name)
            if e.reason in ("FailedScheduling", "NotTriggerScaleUp", "TriggeredScaleUp")]
    return max(mine, key=lambda e: (e.order is not None, e.order or _EPOCH)) if mine else None


def advice(message: str) -> str | None:
    """What the user can change for this scheduler message; None when it is not a resource reason."""
    for pattern, text in REASONS:
        if pattern.search(message):
            return text
    return None


def _devices(view: View, pod: Pod) -> tuple[list[str], list[str]]:
    """(chosen request/subrequest per claim request, allocated devices) from the pod's ResourceClaims."""
    chosen, devices = [], []
    for claim_name in pod.claims.values():
        claim = view.claims.get((pod.namespace, claim_name))
        for result in claim.results if claim else ():
            request = str(result.get("request", ""))
            if request not in chosen:
                chosen.append(request)
            devices.append(f"{result.get('pool', '')}/{result.get('device', '')}")
    return chosen, devices


def replicas(view: View, stack: Stack, predicted: Mapping[str, Sequence[str]]) -> list[Finding]:
    """Each serving pod's node, pool and devices beside the prediction; each Pending pod with its reason."""
    if "Pod" in view.unread:
        return [Finding("replicas", WARNING, f"not checked: pods could not be read ({view.unread['Pod']})")]
    found: list[Finding] = []
    pools = {n.name: stack.pool_of(n) for n in view.nodes}
    by_workload = workload_pods(view)
    for workload in sorted(set(by_workload) | set(predicted)):
        pods = sorted(by_workload.get(workload, []), key=lambda p: p.name)
        expect = list(predicted.get(workload, []))
        found.append(Finding("replicas", OK, f"workload {workload}: {len(pods)} pod(s); make simulate predicts "
                             f"{'; '.join(expect) or 'no placement (not simulated)'}"))
        for pod in pods:
            if pod.node:
                chosen, devices = _devices(view, pod)
                tp = len(devices) if devices else None
                found.append(Finding("replicas", OK, f"{pod.ref} on {pod.node}: "
                                     f"alternative {', '.join(chosen) or 'none recorded'}, devices "
                                     f"{', '.join(devices) or 'none'}"
                                     + (f", tensor-parallel size {tp}" if tp else ""),
                                     pod.node, pools.get(pod.node, ""), (pod.ref,)))
                continue
            event = _latest(view, pod)
            if event is None:
                found.append(Finding("replicas", WARNING, f"{pod.ref} is Pending with no scheduler event yet",
                                     pods=(pod.ref,), pool=", ".join(stack.workload_pools(workload))))
            elif event.reason == "TriggeredScaleUp":
                found.append(Finding("replicas", WARNING, f"{pod.ref} is Pending while a node is added: "
                                     f"{event.message}", pods=(pod.ref,)))
            else:
                fix = advice(event.message)
                severity = FAILURE if fix else WARNING
                found.append(Finding("replicas", severity, f"{pod.ref} is Pending: {event.message}"
                                     + (f" -> {fix}" if fix else ""), pods=(pod.ref,),
                                     pool=", ".join(stack.workload_pools(workload))))
    return found


#: The DaemonSets whose room the library keeps (keys of sizing.DAEMON_SET_ROOM), by the plugin kinds above.
_ROOM_KEYS = {NVIDIA_DRA: "NVIDIA DRA kubelet plugin", TPU_DRA: "TPU DRA kubelet plugin",
              DEVICE_PLUGIN: "NVIDIA device plugin"}


def _room_key(pod: Pod) -> str:
    kind = plugin_kind(pod)
    if kind:
        return _ROOM_KEYS[kind]
    return "NVIDIA driver installer" if "nvidia-driver-installer" in pod.owner[1] else ""


def _show(amount: tuple[int, int]) -> str:
    return f"{amount[0]}m CPU / {amount[1]} MiB"


def drift(view: View, stack: Stack) -> list[Finding]:
    """Real allocatable and DaemonSet requests against the sizing model; warnings only."""
    found: list[Finding] = []
    profile = stack.cloud
    for node in view.nodes:
        pool = stack.pool_of(node)
        if not pool:
            continue
        host = catalog.host_shape(node.instance_type)
        if host is None:
            machine = node.instance_type or "(no node.kubernetes.io/instance-type label)"
            found.append(Finding("drift", WARNING, f"node {node.name}: machine {machine} is not in the catalog",
                                 node.name, pool))
            continue
        estimate, real = profile.allocatable(host), node.allocatable
        over = [what for what, i in (("CPU", 0), ("memory", 1)) if estimate[i] > real[i]]
        text = f"node {node.name} ({node.instance_type}): allocatable {_show(real)}, estimate {_show(estimate)}"
        found.append(Finding("drift", WARNING if over else OK,
                             text + (f"; the estimate is above the real {' and '.join(over)}" if over else ""),
                             node.name, pool))
        system = [p for p in view.pods_on(node.name) if p.owner[0] == "DaemonSet" and not _room_key(p)]
        used = (sum(p.requests[0] for p in system), sum(p.requests[1] for p in system))
        reserve = profile.system_pods_reserve
        if used[0] > reserve[0] or used[1] > reserve[1]:
            found.append(Finding("drift", WARNING, f"node {node.name}: the cloud's per-node pods request "
                                 f"{_show(used)}, above the {_show(reserve)} the library keeps "
                                 "(clouds.system_pods_reserve)", node.name, pool, tuple(p.ref for p in system)))
    seen: set[str] = set()
    for pod in view.pods:
        key = _room_key(pod)
        if not key or not pod.active or pod.owner[1] in seen:
            continue
        seen.add(pod.owner[1])
        room = sizing.DAEMON_SET_ROOM[key]
        if pod.requests[0] > room[0] or pod.requests[1] > room[1]:
            found.append(Finding("drift", WARNING, f"DaemonSet {pod.namespace}/{pod.owner[1]} ({key}) requests "
                                 f"{_show(pod.requests)} per node, above the {_show(room)} the library keeps "
                                 "(sizing.DAEMON_SET_ROOM)", pods=(pod.ref,)))
    return found
