"""The isolation promise and the devices the DRA drivers publish, observed on the cluster.

Each check is a pure function ``(view, stack) -> list[Finding]``.

Which pod is which plugin, by the labels the charts put on their pod templates:

- NVIDIA DRA driver, kubelet plugin: ``dra-driver-nvidia-gpu-component: kubelet-plugin``
  (kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml,
  ``selectorLabels`` with componentName ``kubelet-plugin``, _helpers.tpl ``<chart name>-component``; commit
  14046d00). The chart's earlier name ``nvidia-dra-driver-gpu`` gives ``nvidia-dra-driver-gpu-component``.
- TPU DRA driver, kubelet plugin: the DaemonSet ``<release>-dra-driver-google-tpu-kubeletplugin``
  (kubernetes-sigs/dra-driver-google-tpu deployments/helm/dra-driver-google-tpu/templates/kubeletplugin.yaml,
  commit 5af6ed6d), or ``app.kubernetes.io/name: dra-driver-google-tpu`` (its ``templateLabels``).
- NVIDIA device plugin chart: ``app.kubernetes.io/name: nvidia-device-plugin`` (NVIDIA/k8s-device-plugin
  deployments/helm/nvidia-device-plugin/templates/_helpers.tpl ``templateLabels``, commit 016a7903; the
  chart's GFD and MPS DaemonSets carry other names).
- A cloud's own device plugin (GKE's): its share of ``make verify`` says (``is_device_plugin`` in
  ``verify/gke.py``), as it says which nodes it labels as GPU nodes (``gpu_node``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from gpu_fungibility import catalog, clouds, devices
from gpu_fungibility.device_selectors import DRIVER_DEVICE_CLASS_SELECTORS
from gpu_fungibility.dra_cel import CelCompileError, CelEvaluationError, Device, matches

from verify.findings import FAILURE, OK, WARNING, Finding
from verify.snapshot import Node, Pod, View
from verify.stack import Stack

NVIDIA_DRA, TPU_DRA, DEVICE_PLUGIN = "NVIDIA DRA kubelet plugin", "TPU DRA kubelet plugin", "device plugin"
NVIDIA_DRA_COMPONENT_KEYS = ("dra-driver-nvidia-gpu-component", "nvidia-dra-driver-gpu-component")


def plugin_kind(pod: Pod) -> str:
    """Which plugin the pod is ("" for any other pod)."""
    labels = pod.labels
    if any(labels.get(key) == "kubelet-plugin" for key in NVIDIA_DRA_COMPONENT_KEYS):
        return NVIDIA_DRA
    owner_kind, owner = pod.owner
    if labels.get("app.kubernetes.io/name") == "dra-driver-google-tpu" or (
            owner_kind == "DaemonSet" and owner.endswith("dra-driver-google-tpu-kubeletplugin")):
        return TPU_DRA
    if labels.get("app.kubernetes.io/name") == "nvidia-device-plugin":
        return DEVICE_PLUGIN
    if any(part.is_device_plugin(pod) for part in _cloud_parts() if hasattr(part, "is_device_plugin")):
        return DEVICE_PLUGIN
    return ""


def _cloud_parts() -> tuple[ModuleType, ...]:
    """Every registered cloud's share of ``make verify`` (``verify/<cloud>.py``), where it has one."""
    return _parts_of(clouds.names())


@functools.cache
def _parts_of(names: tuple[str, ...]) -> tuple[ModuleType, ...]:
    # asked once per pod of a cluster that may hold millions: found once per set of registered clouds
    from offline_plan.cloud_parts import registered_parts

    return tuple(registered_parts("verify"))


def _is_gpu_node(node: Node, family: str | None) -> bool:
    if family is not None:
        return family == "gpu"
    return any(part.gpu_node(node) for part in _cloud_parts() if hasattr(part, "gpu_node")) \
        or "nvidia.com/gpu" in node.capacity


def isolation(view: View, stack: Stack) -> list[Finding]:
    """Per node: the device plugin and a DRA kubelet plugin never together; a DRA pool's node has its plugin."""
    if "Pod" in view.unread:
        return [Finding("isolation", WARNING, f"not checked: pods could not be read ({view.unread['Pod']})")]
    found: list[Finding] = []
    for node in view.nodes:
        pool = stack.pool_of(node)
        spec = stack.pools.get(pool)
        family = (spec.family or "gpu") if spec else None
        plugins: dict[str, list[str]] = {}
        running: set[str] = set()
        for pod in view.pods_on(node.name):
            kind = plugin_kind(pod)
            if kind:
                plugins.setdefault(kind, []).append(pod.ref)
                if pod.phase == "Running":
                    running.add(kind)
        dra = [k for k in plugins if k != DEVICE_PLUGIN]
        pods = tuple(ref for refs in plugins.values() for ref in refs)
        where = f"node {node.name} (pool {pool or 'not in the stack'})"
        if dra and DEVICE_PLUGIN in plugins:
            found.append(Finding("isolation", FAILURE, f"{where} runs the device plugin and the {dra[0]} "
                                 f"together: {', '.join(pods)}", node.name, pool, pods))
        elif spec is not None and spec.dra:
            wanted = TPU_DRA if family == "tpu" else NVIDIA_DRA
            if wanted not in plugins:
                found.append(Finding("isolation", FAILURE, f"{where} is in a DRA pool but runs no {wanted} pod: "
                                     "its devices are never published", node.name, pool, pods))
            elif wanted not in running:
                found.append(Finding("isolation", FAILURE, f"{where}: its {wanted} pod is not Running "
                                     f"({', '.join(plugins[wanted])}): claims cannot be prepared there",
                                     node.name, pool, pods))
            else:
                found.append(Finding("isolation", OK, f"{where}: {wanted} only", node.name, pool, pods))
        elif _is_gpu_node(node, family) and not plugins:
            found.append(Finding("isolation", FAILURE, f"{where} is a GPU node with neither the device plugin nor "
                                 "the NVIDIA DRA kubelet plugin: no pod can use its GPUs", node.name, pool))
        elif plugins:
            found.append(Finding("isolation", OK, f"{where}: {', '.join(plugins)}", node.name, pool, pods))
    return found


def _expected(stack: Stack, pool: str, node: str) -> tuple[str, list[dict[str, Any]]]:
    """What the catalog says a node of the pool publishes (MIG slices as the stack's workloads lay them out)."""
    from simulator.cluster import mig_profiles_by_pool

    spec = stack.pools[pool]
    return devices.published(stack.config.cluster.name, node, spec.accelerator.type, spec.accelerator.count,
                             mig_profiles_by_pool(stack.config).get(pool))


def _whole(entries: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Whole accelerators (MIG slices left out): NVIDIA ``type: gpu``, every TPU chip."""
    return [e for e in entries
            if ((e.get("attributes") or {}).get("type") or {}).get("string", "gpu") == "gpu"]


def _mig(entries: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """MIG slices (a GPU with MIG enabled publishes only these)."""
    return [e for e in entries if ((e.get("attributes") or {}).get("type") or {}).get("string") == "mig"]


def _memory(entry: Mapping[str, Any]) -> str:
    memory = str(((entry.get("capacity") or {}).get("memory") or {}).get("value"))
    profile = _attr(entry, "profile")
    return f"{profile}: {memory}" if profile else memory


def compare_devices(expected: list[Mapping[str, Any]], real: list[Mapping[str, Any]],
                    model: Any) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of one node's published devices against the catalog's.

    Whole GPUs (or TPU chips) are compared, or, on a pool whose GPUs are cut into MIG slices, the
    slices: their count, profiles, product and memory per profile.
    """
    mig = not _whole(expected) and bool(_mig(expected))
    have, want = (_mig(real), _mig(expected)) if mig else (_whole(real), _whole(expected))
    problems, warnings = [], []
    if len(have) < len(want):
        problems.append(f"{len(have)} of the {len(want)} {'MIG slices' if mig else 'devices'} the catalog expects")
    if mig:
        wanted = sorted({str(_attr(d, "profile")) for d in want})
        missing = [p for p in wanted if p not in {str(_attr(d, "profile")) for d in have}]
        if missing:
            problems.append(f"no {', '.join(missing)} slice (the stack's MIG layout: {', '.join(wanted)})")
    if isinstance(model, catalog.GpuModel):
        names = sorted({str(_attr(d, "productName")) for d in have})
        if names and names != [model.product_name]:
            problems.append(f"productName {', '.join(names)} (catalog: {model.product_name})")
        memories = sorted({_memory(d) for d in have})
        expected_memory = sorted({_memory(d) for d in want})
        if memories and set(memories) != set(expected_memory):
            warnings.append(f"memory {', '.join(memories)} published, the catalog says {', '.join(expected_memory)}")
    return problems, warnings


def _attr(entry: Mapping[str, Any], name: str) -> Any:
    value = (entry.get("attributes") or {}).get(name) or {}
    return next(iter(value.values()), None) if isinstance(value, dict) else None


def published_devices(view: View, stack: Stack) -> list[Finding]:
    """Each DRA node's ResourceSlices against what the catalog says its machine carries."""
    if "ResourceSlice" in view.unread:
        return [Finding("devices", WARNING, f"not checked: ResourceSlices could not be read "
                                            f"({view.unread['ResourceSlice']})")]
    found: list[Finding] = []
    for node in view.nodes:
        pool = stack.pool_of(node)
        spec = stack.pools.get(pool)
        if spec is None or not spec.dra:
            continue
        driver, expected = _expected(stack, pool, node.name)
        real = [d for s in view.slices_of(node.name) if s.driver == driver for d in s.devices]
        where = f"node {node.name} (pool {pool})"
        if not real:
            found.append(Finding("devices", FAILURE, f"{where} publishes no ResourceSlice device for driver "
                                 f"{driver}; the catalog expects {len(expected)} ({spec.accelerator.type})",
                                 node.name, pool))
            continue
        problems, warnings = compare_devices(expected, real, catalog.accelerator(spec.accelerator.type))
        found += [Finding("devices", WARNING, f"{where}: {w}", node.name, pool) for w in warnings]
        if problems:
            found.append(Finding("devices", FAILURE, f"{where} driver {driver}: {'; '.join(problems)}",
                                 node.name, pool))
        else:
            found.append(Finding("devices", OK, f"{where}: {len(real)} x {driver} device(s) as the catalog says",
                                 node.name, pool))
    return found + claim_alternatives(view, stack)


def _alternatives(template: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(request or request/subrequest, request body)`` of every way a claim template can be satisfied."""
    found = []
    for request in (template.get("devices") or {}).get("requests") or []:
        name = str(request.get("name", ""))
        if request.get("firstAvailable"):
            found += [(f"{name}/{sub.get('name', '')}", sub) for sub in request["firstAvailable"]]
        else:
            found.append((name, request.get("exactly") or request))
    return found


def _selectors(view: View, body: Mapping[str, Any]) -> list[str]:
    class_name = str(body.get("deviceClassName", ""))
    from_class = view.device_classes.get(class_name, DRIVER_DEVICE_CLASS_SELECTORS.get(class_name, []))
    own = [str((s.get("cel") or {}).get("expression", "")) for s in body.get("selectors") or [] if s.get("cel")]
    return [*from_class, *own]


def _fits(selectors: list[str], count: int, entries: list[tuple[str, Mapping[str, Any]]],
          tolerations: list[Mapping[str, Any]] | None = None) -> bool:
    """Whether ``count`` devices among one node's ``(driver, entry)`` pass every selector and carry no taint the
    request does not tolerate (a live slice has ``taints`` only where DRADeviceTaints is on: from 1.36, whose
    allocator keeps such a device out, simulator/dra_features.py)."""
    hits = 0
    for driver, entry in entries:
        if _taint_blocks(entry, tolerations or []):
            continue
        try:
            device = Device.from_slice_device(driver, entry)
            if all(matches(expr, device) for expr in selectors):
                hits += 1
        except (CelCompileError, CelEvaluationError, ValueError):
            continue  # the scheduler skips a device a selector cannot be evaluated on
    return hits >= count


def _taint_blocks(entry: Mapping[str, Any], tolerations: list[Mapping[str, Any]]) -> bool:
    from simulator.dra_features import BLOCKING_EFFECTS, tolerates
    return any(t.get("effect") in BLOCKING_EFFECTS and not any(tolerates(o, t) for o in tolerations)
               for t in entry.get("taints") or ())


def _devices_key(view: View, node: str) -> tuple:
    """What a selector can see of a node's devices (driver, attributes, capacity; device names left out),
    computed once per node: 10,000 nodes of a few machine types evaluate CEL a few times, not 10,000."""
    keys = view.__dict__.setdefault("_devices_keys", {})
    if node not in keys:
        keys[node] = tuple(sorted(
            (s.driver, json.dumps({k: v for k, v in d.items() if k != "name"}, sort_keys=True, default=str))
            for s in view.slices_of(node) for d in s.devices))
    return keys[node]


def _template_workloads(view: View) -> dict[tuple[str, str], str]:
    """(namespace, template) -> workload, from the Deployments' pod templates."""
    found = {}
    for dep in view.deployments:
        workload = dep.labels.get("app.kubernetes.io/instance") or dep.name
        for claim in ((dep.template.get("spec") or {}).get("resourceClaims") or []):
            if claim.get("resourceClaimTemplateName"):
                found[(dep.namespace, str(claim["resourceClaimTemplateName"]))] = workload
    return found


def claim_alternatives(view: View, stack: Stack) -> list[Finding]:
    """Every claim alternative evaluated on the real devices of the pools it is meant for."""
    if "ResourceClaimTemplate" in view.unread:
        return [Finding("devices", WARNING, "claim alternatives not checked: ResourceClaimTemplates could not be "
                                            f"read ({view.unread['ResourceClaimTemplate']})")]
    found: list[Finding] = []
    owners = _template_workloads(view)
    for (namespace, name), template in sorted(view.claim_templates.items()):
        workload = owners.get((namespace, name), "")
        pools = stack.workload_pools(workload) if workload else []
        for label, body in _alternatives(template):
            selectors = _selectors(view, body)
            count = int(body.get("count", 1)) if body.get("allocationMode", "ExactCount") == "ExactCount" else 1
            meant = [p for p in pools if stack.pools[p].dra and _fits(selectors, count, [
                (driver, e) for driver, entries in [_expected(stack, p, f"{p}-model")] for e in entries])]
            where = f"claim template {namespace}/{name} alternative {label}"
            nodes = [n for n in view.nodes if stack.pool_of(n) in meant]
            if not meant:
                continue  # meant for none of the workload's pools by the catalog: the plan's checks say so
            if not nodes:
                found.append(Finding("devices", WARNING, f"{where}: not observed, pools {', '.join(meant)} have "
                                     "no node now", pool=", ".join(meant)))
                continue
            verdicts: dict[tuple, bool] = {}  # nodes publishing the same devices get the same answer
            served = []
            for n in nodes:
                key = _devices_key(view, n.name)
                if key not in verdicts:
                    verdicts[key] = _fits(selectors, count, [(s.driver, d) for s in view.slices_of(n.name)
                                                             for d in s.devices], body.get("tolerations"))
                if verdicts[key]:
                    served.append(n.name)
            if served:
                found.append(Finding("devices", OK, f"{where}: matches on {len(served)} node(s)",
                                     pool=", ".join(meant)))
            else:
                found.append(Finding("devices", FAILURE, f"{where} matches no device on the real nodes of pool(s) "
                                     f"{', '.join(meant)} ({', '.join(n.name for n in nodes)}): selectors "
                                     f"{selectors or ['none']}, count {count}", pool=", ".join(meant)))
    return found
